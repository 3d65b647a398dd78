/**
 * The model-suggestions heuristics of connection indexing, pure functions of an
 * indexed schema. Measures: every numeric column that is not a key gets a sum,
 * every table a row count. Dimensions: every other column (text, time, boolean,
 * and keys). Joins: a column `<x>_id` (or `<x>id`) joins the table named `<x>`,
 * `<x>s` or `<x>es` (or a table with a `_`-prefixed such name) on its primary key
 * (or its `id` column).
 */
import type { Column, TableRef } from "./SchemaReader.ts"

/** An indexed table. */
export interface IndexedTable extends TableRef {
  readonly columns: ReadonlyArray<Column>
}

/** A suggested join: `table.column = toTable.toColumn`. */
export interface JoinSuggestion {
  readonly table: string
  readonly column: string
  readonly toTable: string
  readonly toColumn: string
}

/** The suggestions of one table. */
export interface TableSuggestions {
  readonly table: string
  readonly dimensions: ReadonlyArray<string>
  readonly measures: ReadonlyArray<string>
  readonly joins: ReadonlyArray<JoinSuggestion>
}

const numericType = /^(tinyint|smallint|mediumint|int|integer|bigint|int2|int4|int8|hugeint|decimal|numeric|real|float|float4|float8|double|double precision|money|ubigint|uinteger|usmallint|utinyint)\b/i

/** Whether a column holds numbers. */
export const isNumeric = (column: Column): boolean => numericType.test(column.dataType.trim())

const keyName = /^(.+?)_?id$/i

/** Whether a column is a key (primary key, `id`, or `<x>_id`): a dimension, never summed. */
export const isKey = (column: Column): boolean => column.primaryKey || /^id$/i.test(column.name) || /_id$/i.test(column.name)

/** The join-work estimate of a table: its key-like columns, each a candidate join to resolve. */
export const joinWork = (table: IndexedTable): number =>
  table.columns.filter((c) => !c.primaryKey && !/^id$/i.test(c.name) && keyName.test(c.name)).length

const qualified = (t: TableRef) => `${t.schema}.${t.name}`

/** The suggestions of `table`, joins resolved against every table of the schema. */
export const suggest = (table: IndexedTable, all: ReadonlyArray<IndexedTable>): TableSuggestions => {
  const measures = ["row_count", ...table.columns.filter((c) => isNumeric(c) && !isKey(c)).map((c) => `total_${c.name}`)]
  const dimensions = table.columns.filter((c) => !isNumeric(c) || isKey(c)).map((c) => c.name)
  const joins: Array<JoinSuggestion> = []
  for (const column of table.columns) {
    if (column.primaryKey || /^id$/i.test(column.name)) continue
    const match = keyName.exec(column.name)
    const stem = match?.[1]?.toLowerCase()
    if (stem === undefined || stem === "") continue
    const names = [stem, `${stem}s`, `${stem}es`]
    // Exact names first, then prefixed ones (`app_customers` for `customer_id`).
    const candidates = all.filter((t) => t !== table && t.schema === table.schema)
    const target = candidates.find((t) => names.includes(t.name.toLowerCase())) ??
      candidates.find((t) => names.some((n) => t.name.toLowerCase().endsWith(`_${n}`)))
    if (target === undefined) continue
    const key = target.columns.find((c) => c.primaryKey) ?? target.columns.find((c) => /^id$/i.test(c.name))
    if (key === undefined) continue
    joins.push({ table: qualified(table), column: column.name, toTable: qualified(target), toColumn: key.name })
  }
  return { table: qualified(table), dimensions, measures, joins }
}

const segments = (pattern: string) => pattern.toLowerCase().split(".")

/**
 * Whether a table matches a TableNamePattern: `schema.table`, `schema.*`, or with a
 * leading catalog (the catalog is the connection's database, so only the last two
 * segments are compared).
 */
export const matches = (pattern: string, table: TableRef): boolean => {
  const parts = segments(pattern)
  const name = parts[parts.length - 1]
  const schema = parts[parts.length - 2]
  return schema === table.schema.toLowerCase() && (name === "*" || name === table.name.toLowerCase())
}

/** The tables a connection indexes: those included (all when includeTables is empty) and not excluded. */
export const selectTables = <T extends TableRef>(
  tables: ReadonlyArray<T>,
  settings: { readonly includeTables?: ReadonlyArray<string> | null | undefined; readonly excludeTables?: ReadonlyArray<string> | null | undefined }
): ReadonlyArray<T> => {
  const include = settings.includeTables ?? []
  const exclude = settings.excludeTables ?? []
  return tables.filter((t) =>
    (include.length === 0 || include.some((p) => matches(p, t))) && !exclude.some((p) => matches(p, t))
  )
}
