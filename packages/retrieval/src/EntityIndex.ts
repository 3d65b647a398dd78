/**
 * The in-memory index of one published version: every source, dimension, measure, view, named
 * query and join of its models, with the terms of their names and docs, BM25 postings, word
 * vectors, and the stored values of indexed dimensions. Everything a search needs is computed
 * here, once, so a search only looks things up.
 */
import type { SemanticRuntime } from "@modelgate/core"
import * as Bm25 from "./Bm25.ts"
import * as Semantic from "./Semantic.ts"
import * as Tokens from "./Tokens.ts"
import * as ValueIndex from "./ValueIndex.ts"

/** One entity of the version, as the index sees it. */
export interface Entity {
  readonly id: number
  readonly modelPath: string
  /** Source it is reached from; empty for a named query. */
  readonly source: string
  readonly kind: SemanticRuntime.EntityKind
  readonly path: ReadonlyArray<string>
  readonly field: string
  /** Name shown: the join path and field joined with dots (`products.category`); a source's own name. */
  readonly name: string
  readonly dataType: string
  readonly doc: string
  readonly tags: ReadonlyArray<string>
  readonly nameTerms: ReadonlyArray<Tokens.Term>
  readonly pathTerms: ReadonlyArray<Tokens.Term>
  readonly docTerms: ReadonlyArray<Tokens.Term>
  /** What a view or named query groups by, aggregates and nests, as dotted paths (empty for others). */
  readonly fields: ReadonlyArray<string>
  /** Key of its value field when its values are indexed. */
  readonly valueField: number | undefined
}

/** Auto-indexed (untagged) string dimensions are kept only with at most this many distinct values. */
export const autoValueCap = 100
/** Values read for a `#(index_values)` dimension: the most frequent ones, at most this many. */
export const taggedValueCap = 1_000

/** A dimension whose values the build reads with one grouped query. */
export interface ValueTarget {
  readonly field: number
  readonly modelPath: string
  readonly source: string
  readonly path: ReadonlyArray<string>
  readonly name: string
  readonly tagged: boolean
  /** The query groups at most `cap + 1` rows: one more than the cap tells an auto field is too diverse. */
  readonly cap: number
}

/** Values read for a target, most frequent first; `complete` is false when the cap cut them. */
export interface FieldValues {
  readonly field: number
  readonly values: ReadonlyArray<ValueIndex.Value>
}

/** The index of a version. */
export interface EntityIndex {
  readonly entities: ReadonlyArray<Entity>
  readonly nameBm25: Bm25.Bm25
  readonly docBm25: Bm25.Bm25
  /** Document frequency of each term over names and docs together, for phrase term weights. */
  readonly df: ReadonlyMap<string, number>
  readonly values: ValueIndex.ValueIndex
  /** value field → entities holding it (one per join path reaching the same field). */
  readonly fieldEntities: ReadonlyMap<number, ReadonlyArray<number>>
  readonly vocabulary: Semantic.Vocabulary
  readonly nameIds: ReadonlyArray<Int32Array>
  readonly pathIds: ReadonlyArray<Int32Array>
  readonly docIds: ReadonlyArray<Int32Array>
  /**
   * Vocabulary term → the entities holding it in their name, join path or doc, ascending. Only
   * these entities can score on a term, so a search scores the entities of the terms a phrase
   * reaches (itself or a near-synonym) and skips the rest.
   */
  readonly termEntities: ReadonlyArray<Int32Array>
  /** Date and timestamp dimensions (`isTime`), the entities time phrases score. */
  readonly timeEntities: ReadonlyArray<number>
  /** 1 for vocabulary terms that are handle words of names (`Tokens.genericNameWords`). */
  readonly generic: Uint8Array
  /**
   * Per entity, the entities of the fields a view or named query shows (its `fields` resolved in
   * its source; a named query's in any source of its model); empty for other entities.
   */
  readonly viewFields: ReadonlyArray<Int32Array>
  /** Entities with resolved `viewFields`. */
  readonly views: ReadonlyArray<number>
  /**
   * Per view (entities of `views`), the vocabulary terms of what it shows: its name and doc and
   * the names, join paths and docs of its `viewFields`; empty for other entities.
   */
  readonly viewTerms: ReadonlyArray<Int32Array>
  /** Initialism of a field's name (`arr` for `annual_run_rate`) → the entities so named, ascending. */
  readonly initialisms: ReadonlyMap<string, ReadonlyArray<number>>
  /** Every entity name as its terms joined by spaces, to tell a phrase that is a name. */
  readonly names: ReadonlySet<string>
  readonly vectors: Semantic.Vectors | undefined
  /** Entity embeddings of a remote model, when one is configured. */
  readonly modelVectors: ReadonlyArray<Float32Array | undefined> | undefined
}

const isTimeType = (dataType: string) => /date|time/i.test(dataType)

/** True for date and timestamp dimensions, the targets of time phrases. */
export const isTime = (entity: Entity): boolean => entity.kind === "dimension" && isTimeType(entity.dataType)

/** Plain entities of the models, before values: names split, docs analyzed. */
export const entitiesOf = (models: ReadonlyArray<SemanticRuntime.ModelInfo>): Array<Omit<Entity, "valueField">> => {
  const out: Array<Omit<Entity, "valueField">> = []
  for (const model of models) {
    for (const e of model.entities) {
      const name = e.kind === "source" ? e.name : [...e.path, e.name].join(".")
      out.push({
        id: out.length,
        modelPath: model.modelPath,
        source: e.source,
        kind: e.kind,
        path: e.path,
        field: e.name,
        name,
        dataType: e.dataType,
        doc: e.doc ?? "",
        tags: e.tags,
        nameTerms: Tokens.analyze(e.name, true),
        pathTerms: e.path.flatMap((p) => Tokens.analyze(p, true)),
        docTerms: Tokens.analyze(e.doc ?? ""),
        fields: e.fields ?? []
      })
    }
  }
  return out
}

/**
 * Which dimensions to read values of, and which entities share each read. String dimensions
 * tagged `#(index_values)` are read up to `taggedValueCap` values; other string dimensions of a
 * source's own (unjoined) fields are read up to `autoValueCap + 1` and kept only when they have
 * at most `autoValueCap` distinct values. The same underlying field reached through several join
 * paths is read once, through its shortest path: two dimensions are the same field when they have
 * the same name, type and non-empty doc, or when the last join of one is named like a top-level
 * source holding a dimension of that name (`order_items.products.category` is `products.category`).
 */
export const valueTargets = (
  entities: ReadonlyArray<Omit<Entity, "valueField">>
): { readonly targets: ReadonlyArray<ValueTarget>; readonly fieldOf: ReadonlyMap<number, number> } => {
  const topLevel = new Map<string, Omit<Entity, "valueField">>()
  for (const e of entities) {
    if (e.kind === "dimension" && e.path.length === 0) topLevel.set(`${e.modelPath}\u0000${e.source}\u0000${e.field}`, e)
  }
  const keyOf = (e: Omit<Entity, "valueField">): string => {
    if (e.doc !== "") return `${e.modelPath}\u0000doc\u0000${e.field}\u0000${e.dataType}\u0000${e.doc}`
    const lastJoin = e.path[e.path.length - 1]
    if (lastJoin !== undefined) {
      const same = topLevel.get(`${e.modelPath}\u0000${lastJoin}\u0000${e.field}`)
      if (same !== undefined && same.dataType === e.dataType) return keyOf(same)
    }
    return `${e.modelPath}\u0000${e.source}\u0000${e.name}`
  }
  const groups = new Map<string, Array<Omit<Entity, "valueField">>>()
  for (const e of entities) {
    if (e.kind !== "dimension" || e.dataType !== "string") continue
    const key = keyOf(e)
    const list = groups.get(key)
    if (list === undefined) groups.set(key, [e])
    else list.push(e)
  }
  const targets: Array<ValueTarget> = []
  const fieldOf = new Map<number, number>()
  for (const members of groups.values()) {
    const tagged = members.some((e) => e.tags.includes("index_values"))
    const representative = [...members].sort((x, y) => x.path.length - y.path.length || x.id - y.id)[0]
    if (representative === undefined) continue
    if (!tagged && representative.path.length > 0) continue
    const field = targets.length
    targets.push({
      field,
      modelPath: representative.modelPath,
      source: representative.source,
      path: representative.path,
      name: representative.field,
      tagged,
      cap: tagged ? taggedValueCap : autoValueCap
    })
    for (const e of members) fieldOf.set(e.id, field)
  }
  return { targets, fieldOf }
}

const quote = (name: string) => `\`${name.replaceAll("`", "")}\``

/** Output names of the value query, unlikely to clash with a model's fields. */
export const valueColumn = "mg_value__"
export const countColumn = "mg_rows__"

/** The grouped Malloy query reading a target's most frequent values (one row more than the cap). */
export const valueQuery = (target: ValueTarget): string => {
  const field = [...target.path, target.name].map(quote).join(".")
  return `run: ${quote(target.source)} -> {\n  where: ${field} != null\n  group_by: ${valueColumn} is ${field}\n  ` +
    `aggregate: ${countColumn} is count()\n  order_by: ${countColumn} desc\n  limit: ${target.cap + 1}\n}`
}

/** The values of a target from the query's rows; an untagged field over its cap keeps none. */
export const valuesFromRows = (
  target: ValueTarget,
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>
): ReadonlyArray<ValueIndex.Value> => {
  if (!target.tagged && rows.length > target.cap) return []
  const values: Array<ValueIndex.Value> = []
  for (const row of rows.slice(0, target.cap)) {
    const v = row[valueColumn]
    if (typeof v !== "string" || v.trim() === "") continue
    const n = row[countColumn]
    values.push({ text: v, count: typeof n === "number" ? n : typeof n === "bigint" ? Number(n) : Number(n ?? 0) })
  }
  return values
}

/**
 * Builds the index from the entities, the values read for each value field, the word vectors
 * (optional: without them the meaning signal is off) and a remote model's entity embeddings.
 */
export const make = (options: {
  readonly entities: ReadonlyArray<Omit<Entity, "valueField">>
  readonly fieldOf: ReadonlyMap<number, number>
  readonly values: ReadonlyArray<FieldValues>
  readonly vectors: Semantic.Vectors | undefined
  readonly modelVectors?: ReadonlyArray<Float32Array | undefined> | undefined
}): EntityIndex => {
  const kept = new Set(options.values.filter((f) => f.values.length > 0).map((f) => f.field))
  const entities: Array<Entity> = options.entities.map((e) => {
    const field = options.fieldOf.get(e.id)
    return { ...e, valueField: field !== undefined && kept.has(field) ? field : undefined }
  })
  const fieldEntities = new Map<number, Array<number>>()
  for (const e of entities) {
    if (e.valueField === undefined) continue
    const list = fieldEntities.get(e.valueField)
    if (list === undefined) fieldEntities.set(e.valueField, [e.id])
    else list.push(e.id)
  }
  const nameBm25 = Bm25.make(entities.map((e) => [...e.nameTerms, ...e.pathTerms].map((t) => t.term)))
  const docBm25 = Bm25.make(entities.map((e) => e.docTerms.map((t) => t.term)))
  const df = new Map<string, number>()
  for (const e of entities) {
    for (const term of new Set([...e.nameTerms, ...e.pathTerms, ...e.docTerms].map((t) => t.term))) {
      df.set(term, (df.get(term) ?? 0) + 1)
    }
  }
  const vectors = options.vectors
  const vocabulary = Semantic.vocabulary(vectors, entities.flatMap((e) => [...e.nameTerms, ...e.pathTerms, ...e.docTerms]))
  const ids = (terms: ReadonlyArray<Tokens.Term>) =>
    Int32Array.from(new Set(terms.map((t) => vocabulary.ids.get(t.term) ?? -1).filter((i) => i >= 0)))
  const nameIds = entities.map((e) => ids(e.nameTerms))
  const pathIds = entities.map((e) => ids(e.pathTerms))
  const docIds = entities.map((e) => ids(e.docTerms))
  const holders: Array<Array<number>> = vocabulary.terms.map(() => [])
  for (let id = 0; id < entities.length; id++) {
    for (const list of [nameIds[id], pathIds[id], docIds[id]]) {
      for (const v of list ?? []) {
        const at = holders[v]
        if (at !== undefined && at[at.length - 1] !== id) at.push(id)
      }
    }
  }
  const byName = new Map<string, Array<number>>()
  for (const e of entities) {
    if (e.kind === "source" || e.kind === "join" || e.kind === "query") continue
    for (const key of [`${e.modelPath}\u0000${e.source}\u0000${e.name}`, `${e.modelPath}\u0000\u0000${e.name}`]) {
      const list = byName.get(key)
      if (list === undefined) byName.set(key, [e.id])
      else list.push(e.id)
    }
  }
  const viewFields = entities.map((e) =>
    Int32Array.from(new Set(e.fields.flatMap((f) => byName.get(`${e.modelPath}\u0000${e.source}\u0000${f}`) ?? [])))
  )
  const viewTerms = entities.map((_e, id) => {
    const fields = viewFields[id] ?? new Int32Array(0)
    if (fields.length === 0) return new Int32Array(0)
    const bag = new Set<number>()
    for (const list of [nameIds[id], docIds[id]]) for (const v of list ?? []) bag.add(v)
    for (const f of fields) {
      for (const list of [nameIds[f], pathIds[f], docIds[f]]) for (const v of list ?? []) bag.add(v)
    }
    return Int32Array.from(bag)
  })
  const initialisms = new Map<string, Array<number>>()
  for (const e of entities) {
    if (e.kind === "source" || e.kind === "join") continue
    for (const a of Tokens.initialisms(e.field)) {
      const list = initialisms.get(a)
      if (list === undefined) initialisms.set(a, [e.id])
      else list.push(e.id)
    }
  }
  return {
    entities,
    nameBm25,
    docBm25,
    df,
    values: ValueIndex.make(options.values),
    fieldEntities,
    vocabulary,
    nameIds,
    pathIds,
    docIds,
    termEntities: holders.map((list) => Int32Array.from(list)),
    timeEntities: entities.flatMap((e, id) => isTime(e) ? [id] : []),
    generic: Uint8Array.from(vocabulary.terms, (t) => Tokens.genericNameWords.has(t) ? 1 : 0),
    viewFields,
    views: entities.flatMap((_e, id) => (viewFields[id]?.length ?? 0) > 0 ? [id] : []),
    viewTerms,
    initialisms,
    names: new Set(entities.map((e) => e.nameTerms.map((t) => t.term).join(" "))),
    vectors,
    modelVectors: options.modelVectors
  }
}

/**
 * Weight of a phrase term: its smoothed inverse document frequency over names and docs. A term no
 * entity mentions weighs like one mentioned once: it still dilutes the phrase ("flights left"),
 * but a stray verb does not outweigh the word that names the entity.
 */
export const termWeight = (df: ReadonlyMap<string, number>, documents: number, term: string): number =>
  Math.log(1 + (documents + 1) / (Math.max(1, df.get(term) ?? 0) + 0.5))

/** Number of values stored. */
export const valueCount = (index: EntityIndex): number => index.values.size

/** True when the text's terms are exactly some entity's name terms ("carrier type" for `carrier_type`). */
export const isName = (index: EntityIndex, text: string): boolean =>
  index.names.has(Tokens.analyze(text).map((t) => t.term).join(" "))
