/**
 * Connection indexing: schema indexing (tables and columns, honouring
 * includeTables / excludeTables, SKIPPED on excludeAllTables) then model
 * suggestions, with the progress of each pipeline on the connection. Each
 * connection is a cluster entity with a persisted mailbox, so its jobs run one
 * at a time and in order on whichever runner owns it, and a job interrupted by a
 * crash is delivered again. Every status move goes through core's IndexingStatus.
 */
import { ConnectionRepo, IndexingStatus } from "@modelgate/core"
import type { Errors } from "@modelgate/core"
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import type { Sharding } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql/SqlClient"
import { modifyConnection } from "./internal/Records.ts"
import * as ModelSuggestions from "./ModelSuggestions.ts"
import * as SchemaReader from "./SchemaReader.ts"

/** Deployment options of indexing. */
export class IndexingOptions extends Context.Reference<{
  readonly connectTimeoutMillis: number
  readonly duckdbPath: string | undefined
  /** A pause after each table; zero in production, tests slow runs down with it to watch progress. */
  readonly tablePause: number
}>("@modelgate/jobs/IndexingOptions", {
  defaultValue: () => ({ connectTimeoutMillis: 10_000, duckdbPath: undefined, tablePause: 0 })
}) {}

const RefPayload = { organization: Schema.String, environment: Schema.String, name: Schema.String }

/** Brings a connection's indexing up to date; persisted, so it survives runner crashes. */
export const Index = Rpc.make("Index", { payload: RefPayload }).annotate(ClusterSchema.Persisted, true)

/** The entity of one connection, addressed by `organization/environment/name`. */
export const ConnectionIndexer = Entity.make("modelgate/ConnectionIndexer", [Index])

/** The entity id of a connection. */
export const entityId = (ref: ConnectionRepo.ConnectionRef) => `${ref.organization}/${ref.environment}/${ref.name}`

type Ref = ConnectionRepo.ConnectionRef
type Snapshot = IndexingStatus.IndexingSnapshot

const snapshotOf = (r: ConnectionRepo.ConnectionRecord): Snapshot => ({
  indexingStatus: r.indexingStatus,
  indexingStatusLastUpdated: r.indexingStatusLastUpdated,
  indexingProgress: r.indexingProgress
})

/** Applies an indexing event to the stored connection (recomputed on conflicts); returns the new status. */
const apply = (ref: Ref, event: IndexingStatus.IndexingEvent) =>
  Effect.map(
    modifyConnection(ref, (record) =>
      Effect.map(IndexingStatus.transitionNow(snapshotOf(record), event), (next) => ({ ...record, ...next }))),
    (r) => r.indexingStatus
  )

const store = (ref: Ref, fields: { readonly tables?: unknown; readonly suggestions?: unknown; readonly error: string | null }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const now = DateTime.formatIso(yield* DateTime.now)
    const tables = JSON.stringify(fields.tables ?? [])
    const suggestions = JSON.stringify(fields.suggestions ?? [])
    yield* sql`
      INSERT INTO modelgate_connection_indexes (organization, environment, connection, tables, suggestions, error, updated_at)
      VALUES (${ref.organization}, ${ref.environment}, ${ref.name}, ${tables}::jsonb, ${suggestions}::jsonb, ${fields.error}, ${now}::timestamptz)
      ON CONFLICT (organization, environment, connection) DO UPDATE SET
        tables = CASE WHEN ${fields.tables === undefined} THEN modelgate_connection_indexes.tables ELSE EXCLUDED.tables END,
        suggestions = CASE WHEN ${fields.suggestions === undefined} THEN modelgate_connection_indexes.suggestions ELSE EXCLUDED.suggestions END,
        error = EXCLUDED.error, updated_at = EXCLUDED.updated_at`
  }).pipe(Effect.orDie)

/** What indexing stored for a connection: its schema, suggestions and last error. */
export const stored = (ref: Ref) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ readonly tables: unknown; readonly suggestions: unknown; readonly error: string | null }>`
      SELECT tables, suggestions, error FROM modelgate_connection_indexes
      WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND connection = ${ref.name}`
    const row = rows[0]
    if (row === undefined) return undefined
    const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v)
    return {
      tables: parse(row.tables) as ReadonlyArray<ModelSuggestions.IndexedTable>,
      suggestions: parse(row.suggestions) as ReadonlyArray<ModelSuggestions.TableSuggestions>,
      error: row.error
    }
  }).pipe(Effect.orDie)

const pause = Effect.gen(function*() {
  const options = yield* IndexingOptions
  if (options.tablePause > 0) yield* Effect.sleep(options.tablePause)
})

// Schema indexing: lists the selected tables and reads their columns one by one,
// reporting SchemaIndexingProgress after each.
const indexSchema = (ref: Ref, record: ConnectionRepo.ConnectionRecord) =>
  Effect.scoped(Effect.gen(function*() {
    const options = yield* IndexingOptions
    const reader = yield* SchemaReader.open(record.settings, options)
    const tables = ModelSuggestions.selectTables(yield* reader.tables, record.settings)
    const indexed: Array<ModelSuggestions.IndexedTable> = []
    let columnsTotal = 0
    let failed = 0
    const report = (processing: number) =>
      apply(ref, {
        _tag: "progressed",
        progress: {
          schemaProgress: {
            tablesTotal: tables.length,
            tablesProcessing: processing,
            tablesCompleted: indexed.length,
            tablesFailed: failed,
            columnsTotal: indexed.length === 0 && processing > 0 ? null : columnsTotal,
            columnsCompleted: indexed.length === 0 && processing > 0 ? null : columnsTotal
          }
        }
      })
    yield* report(tables.length === 0 ? 0 : 1)
    for (const table of tables) {
      const columns = yield* Effect.result(reader.columns(table))
      if (columns._tag === "Failure") failed++
      else {
        indexed.push({ ...table, columns: columns.success })
        columnsTotal += columns.success.length
      }
      yield* pause
      yield* report(indexed.length + failed < tables.length ? 1 : 0)
    }
    return indexed
  }))

// Model suggestions over the indexed tables, reporting ModelSuggestionsIndexingProgress.
const suggestModels = (ref: Ref, tables: ReadonlyArray<ModelSuggestions.IndexedTable>) =>
  Effect.gen(function*() {
    const joinWorkTotal = tables.reduce((n, t) => n + ModelSuggestions.joinWork(t), 0)
    const done: Array<ModelSuggestions.TableSuggestions> = []
    let joinWorkCompleted = 0
    const report = () =>
      apply(ref, {
        _tag: "progressed",
        progress: {
          modelSuggestionsProgress: {
            tablesTotal: tables.length,
            tablesProcessing: done.length < tables.length ? 1 : 0,
            tablesCompleted: done.length,
            tablesFailed: 0,
            joinWorkTotal,
            joinWorkCompleted,
            joinsGenerated: done.reduce((n, s) => n + s.joins.length, 0),
            dimensionsGenerated: done.reduce((n, s) => n + s.dimensions.length, 0),
            measuresGenerated: done.reduce((n, s) => n + s.measures.length, 0)
          }
        }
      })
    yield* report()
    for (const table of tables) {
      done.push(ModelSuggestions.suggest(table, tables))
      joinWorkCompleted += ModelSuggestions.joinWork(table)
      yield* pause
      yield* report()
    }
    return done
  })

/**
 * Brings a connection's indexing up to date: starts queued indexing (UNKNOWN),
 * skips an excluded connection, resumes a run a crash interrupted, and runs again
 * while the connection was updated mid-run (RETRY). Idle statuses need nothing.
 */
export const drain: (ref: Ref) => Effect.Effect<
  void,
  Errors.Conflict | Errors.ResourceNotFound | Errors.IllegalTransition,
  ConnectionRepo.ConnectionRepo | SqlClient
> = Effect.fn("ConnectionIndexing.drain")(function*(ref: Ref) {
  const repo = yield* ConnectionRepo.ConnectionRepo
  for (let round = 0; round < 100; round++) {
    const found = yield* Effect.result(repo.get(ref))
    if (found._tag === "Failure") return
    const record = found.success
    let status = record.indexingStatus
    if (status === "INDEXED" || status === "FAILED" || status === "SKIPPED") return
    if (status === "UNKNOWN" || status === "RETRY") {
      if (record.settings.excludeAllTables) {
        yield* apply(ref, { _tag: "excluded" })
        return
      }
      status = yield* apply(ref, { _tag: "started" })
    }
    let tables: ReadonlyArray<ModelSuggestions.IndexedTable>
    if (status === "MODEL_SUGGESTION_INDEXING") {
      // A crash interrupted the suggestions: the schema of this run is stored.
      tables = (yield* stored(ref))?.tables ?? []
    } else {
      const schema = yield* Effect.result(indexSchema(ref, record))
      if (schema._tag === "Failure") {
        // The spec's Connection has no field for the reason: it is stored beside the index
        // (`stored(ref).error`) and logged for the operator.
        yield* Effect.logWarning("schema indexing failed", { connection: entityId(ref), error: schema.failure.message })
        yield* store(ref, { error: schema.failure.message })
        if ((yield* apply(ref, { _tag: "schemaFailed" })) === "SCHEMA_INDEXING") continue
        return
      }
      tables = schema.success
      yield* store(ref, { tables, error: null })
      const next = yield* apply(ref, { _tag: "schemaFinished" })
      // Updated during schema indexing: the re-index starts now, on the new settings.
      if (next === "RETRY") {
        yield* apply(ref, { _tag: "started" })
        continue
      }
    }
    const suggestions = yield* Effect.result(suggestModels(ref, tables))
    if (suggestions._tag === "Failure") {
      yield* store(ref, { error: String(suggestions.failure) })
      if ((yield* apply(ref, { _tag: "suggestionsFailed" })) === "SCHEMA_INDEXING") continue
      return
    }
    yield* store(ref, { suggestions: suggestions.success, error: null })
    // INDEXED, or SCHEMA_INDEXING again when the connection was updated meanwhile (RETRY).
    if ((yield* apply(ref, { _tag: "bothFinished" })) !== "SCHEMA_INDEXING") return
  }
})

/** Registers the indexing entity: needs storage, the SqlClient of the jobs tables, and sharding. */
export const layer: Layer.Layer<never, never, Sharding.Sharding | ConnectionRepo.ConnectionRepo | SqlClient> =
  ConnectionIndexer.toLayer(Effect.gen(function*() {
    const context = yield* Effect.context<ConnectionRepo.ConnectionRepo | SqlClient>()
    return ConnectionIndexer.of({
      Index: ({ payload }) =>
        drain(payload).pipe(
          // A connection deleted mid-run, or a storage failure: logged; the next change queues it again.
          Effect.catchCause((cause) => Effect.logError("connection indexing failed", cause)),
          Effect.provideContext(context)
        )
    })
  }))

/** Sends an indexing job for a connection (stored before it returns). */
export const makeEnqueue: Effect.Effect<(ref: Ref) => Effect.Effect<void>, never, Sharding.Sharding> = Effect.map(
  ConnectionIndexer.client,
  (client) => (ref) =>
    client(entityId(ref)).Index({ organization: ref.organization, environment: ref.environment, name: ref.name }, { discard: true }).pipe(
      Effect.orDie
    )
)
