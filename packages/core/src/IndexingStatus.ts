/**
 * A connection's `indexingStatus` as a state machine over the events of the
 * indexing pipelines (schema indexing, then model suggestions), of connection
 * updates and of exclusion. Each step also yields `indexingStatusLastUpdated` and
 * `indexingProgress`; the progress schemas of the Connection resource live here.
 */
import { DateTime, Effect, Result, Schema } from "effect"
import * as Errors from "./Errors.ts"

/** A connection's `indexingStatus`. */
export const IndexingStatus = Schema.Literals([
  "UNKNOWN",
  "SCHEMA_INDEXING",
  "INDEXED",
  "SKIPPED",
  "FAILED",
  "RETRY",
  "MODEL_SUGGESTION_INDEXING"
]).annotate({ identifier: "IndexingStatus" })
/** A connection's `indexingStatus`. */
export type IndexingStatus = typeof IndexingStatus.Type

/** Every indexing status, in the order of the specification. */
export const indexingStatuses: ReadonlyArray<IndexingStatus> = IndexingStatus.literals

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const NullableCount = Schema.NullOr(Count)

/** Progress of the schema-indexing pipeline; column sums are null until counts are recorded. */
export const SchemaIndexingProgress = Schema.Struct({
  tablesTotal: Count,
  tablesProcessing: Count,
  tablesCompleted: Count,
  tablesFailed: Count,
  columnsTotal: NullableCount,
  columnsCompleted: NullableCount
}).annotate({ identifier: "SchemaIndexingProgress" })
/** Progress of the schema-indexing pipeline. */
export type SchemaIndexingProgress = typeof SchemaIndexingProgress.Type

/** Progress of the model-suggestions pipeline (joins, dimensions, measures). */
export const ModelSuggestionsIndexingProgress = Schema.Struct({
  tablesTotal: Count,
  tablesProcessing: Count,
  tablesCompleted: Count,
  tablesFailed: Count,
  joinWorkTotal: NullableCount,
  joinWorkCompleted: NullableCount,
  joinsGenerated: NullableCount,
  dimensionsGenerated: NullableCount,
  measuresGenerated: NullableCount
}).annotate({ identifier: "ModelSuggestionsIndexingProgress" })
/** Progress of the model-suggestions pipeline. */
export type ModelSuggestionsIndexingProgress = typeof ModelSuggestionsIndexingProgress.Type

/** A connection's aggregate `indexingProgress` (the resource makes it nullable). */
export const ConnectionIndexingProgress = Schema.Struct({
  schemaProgress: Schema.optionalKey(SchemaIndexingProgress),
  modelSuggestionsProgress: Schema.optionalKey(ModelSuggestionsIndexingProgress)
}).annotate({ identifier: "ConnectionIndexingProgress" })
/** A connection's aggregate `indexingProgress`. */
export type ConnectionIndexingProgress = typeof ConnectionIndexingProgress.Type

/** The machine name carried by this module's IllegalTransition errors. */
export const machine = "IndexingStatus"

/** The kinds of event the machine reacts to. */
export const IndexingEventKind = Schema.Literals([
  "created",
  "started",
  "progressed",
  "schemaFinished",
  "schemaFailed",
  "suggestionsFailed",
  "bothFinished",
  "updated",
  "excluded"
]).annotate({ identifier: "IndexingEventKind" })
/** The kinds of event the machine reacts to. */
export type IndexingEventKind = typeof IndexingEventKind.Type

/** Every event kind. */
export const indexingEventKinds: ReadonlyArray<IndexingEventKind> = IndexingEventKind.literals

/**
 * An event: `created` (the connection was created; only {@link create} handles it),
 * `started` (a job begins schema indexing), `progressed` (the running job reports
 * counts), `schemaFinished`, `schemaFailed`, `suggestionsFailed`, `bothFinished`
 * (the job's outcomes), `updated` (the connection was updated), `excluded` (a job
 * found `excludeAllTables`).
 */
export type IndexingEvent =
  | { readonly _tag: Exclude<IndexingEventKind, "progressed"> }
  | { readonly _tag: "progressed"; readonly progress: ConnectionIndexingProgress }

/** The indexing fields of a connection, with times as DateTime (the resource renders them as ISO strings). */
export interface IndexingSnapshot {
  readonly indexingStatus: IndexingStatus
  readonly indexingStatusLastUpdated: DateTime.Utc | null
  readonly indexingProgress: ConnectionIndexingProgress | null
}

/** Whether `indexingProgress` is shown in this status: only while a pipeline visibly runs. */
export const showsProgress = (status: IndexingStatus): boolean =>
  status === "SCHEMA_INDEXING" || status === "MODEL_SUGGESTION_INDEXING"

/** The `indexingProgress` a read returns: the stored value while shown, otherwise null. */
export const progressForRead = (snapshot: IndexingSnapshot): ConnectionIndexingProgress | null =>
  showsProgress(snapshot.indexingStatus) ? snapshot.indexingProgress : null

/** The indexing fields of a new connection: UNKNOWN, i.e. queued; indexing then starts automatically. */
export const create = (now: DateTime.Utc): IndexingSnapshot => ({
  // Creation always lands UNKNOWN, even with excludeAllTables: the queued job
  // reports `excluded`, which moves it to SKIPPED.
  indexingStatus: "UNKNOWN",
  indexingStatusLastUpdated: now,
  indexingProgress: null
})

// What an event does from a state: a next status and what happens to progress,
// or the reason it is illegal.
type Outcome =
  | { readonly to: IndexingStatus; readonly progress: "keep" | "clear" | "replace" }
  | { readonly illegal: string }

const go = (to: IndexingStatus, progress: "keep" | "clear" | "replace" = "clear"): Outcome => ({ to, progress })
const no = (illegal: string): Outcome => ({ illegal })

const outcome = (from: IndexingStatus, event: IndexingEventKind): Outcome => {
  // A connection is created once; creation is `create`, never an event on an existing connection.
  if (event === "created") return no("the connection already exists")
  switch (from) {
    case "UNKNOWN":
      switch (event) {
        // Queued indexing starts automatically.
        case "started":
          return go("SCHEMA_INDEXING")
        // Already queued: an update changes nothing.
        case "updated":
          return go("UNKNOWN", "keep")
        // The queued job found excludeAllTables.
        case "excluded":
          return go("SKIPPED")
        default:
          return no("no indexing job is running")
      }
    case "SCHEMA_INDEXING":
      switch (event) {
        case "progressed":
          return go("SCHEMA_INDEXING", "replace")
        // Schema search is usable; the model-suggestions pipeline runs next. The
        // finished schema counts stay visible.
        case "schemaFinished":
          return go("MODEL_SUGGESTION_INDEXING", "keep")
        case "schemaFailed":
          return go("FAILED")
        // Connection updated while indexing runs: re-indexed when the current job finishes.
        case "updated":
          return go("RETRY")
        case "started":
          return no("an indexing job is already running")
        case "excluded":
          return no("a running job is superseded by an update (RETRY) before exclusion")
        default:
          return no("schema indexing has not finished")
      }
    case "MODEL_SUGGESTION_INDEXING":
      switch (event) {
        case "progressed":
          return go("MODEL_SUGGESTION_INDEXING", "replace")
        // Both pipelines finished: INDEXED, and indexingProgress becomes null.
        case "bothFinished":
          return go("INDEXED")
        // A model-suggestions failure fails the indexing run as a whole.
        case "suggestionsFailed":
          return go("FAILED")
        // Connection updated while indexing runs: re-indexed when the current job finishes.
        case "updated":
          return go("RETRY")
        case "started":
          return no("an indexing job is already running")
        case "excluded":
          return no("a running job is superseded by an update (RETRY) before exclusion")
        default:
          return no("schema indexing already finished")
      }
    case "RETRY":
      switch (event) {
        // The re-index begins (the runner supersedes the current job).
        case "started":
          return go("SCHEMA_INDEXING")
        // The current job keeps reporting, but progress is not shown in RETRY.
        case "progressed":
          return go("RETRY")
        // The current job moves to its second pipeline; the re-index is still pending.
        case "schemaFinished":
          return go("RETRY")
        // "Re-indexed when the current job finishes": however it ends, indexing
        // restarts instead of landing INDEXED or FAILED on outdated settings.
        case "bothFinished":
        case "schemaFailed":
        case "suggestionsFailed":
          return go("SCHEMA_INDEXING")
        // Already due for a re-index.
        case "updated":
          return go("RETRY")
        // The pending re-index found excludeAllTables.
        case "excluded":
          return go("SKIPPED")
      }
    // Idle after a run.
    case "INDEXED":
    case "FAILED":
      switch (event) {
        // A manual start is an optional re-trigger.
        case "started":
          return go("SCHEMA_INDEXING")
        // Updated while idle: queued again.
        case "updated":
          return go("UNKNOWN")
        case "excluded":
          return go("SKIPPED")
        default:
          return no("no indexing job is running")
      }
    case "SKIPPED":
      switch (event) {
        // An update is how exclusion is lifted: queued again; if excludeAllTables
        // still holds, the queued job reports `excluded` once more.
        case "updated":
          return go("UNKNOWN")
        // Already excluded.
        case "excluded":
          return go("SKIPPED")
        case "started":
          return no("the connection is excluded from indexing; update it to re-queue")
        default:
          return no("no indexing job is running")
      }
  }
}

/**
 * Applies an event at time `now`. `indexingStatusLastUpdated` becomes `now` only
 * when the status changes; `indexingProgress` is null outside SCHEMA_INDEXING and
 * MODEL_SUGGESTION_INDEXING. Events not allowed from the current status fail with
 * IllegalTransition (CONFLICT).
 */
export const transition = (
  snapshot: IndexingSnapshot,
  event: IndexingEvent,
  now: DateTime.Utc
): Result.Result<IndexingSnapshot, Errors.IllegalTransition> => {
  const from = snapshot.indexingStatus
  const result = outcome(from, event._tag)
  if ("illegal" in result) {
    return Result.fail(
      new Errors.IllegalTransition({
        message: `indexing event ${event._tag} is not allowed in ${from}: ${result.illegal}`,
        machine,
        from,
        event: event._tag
      })
    )
  }
  const progress = event._tag === "progressed" && result.progress === "replace"
    ? event.progress
    : result.progress === "keep"
    ? snapshot.indexingProgress
    : null
  return Result.succeed({
    indexingStatus: result.to,
    // The field says when the status last changed, so a no-op keeps it.
    indexingStatusLastUpdated: result.to === from ? snapshot.indexingStatusLastUpdated : now,
    // Progress is only ever shown while a pipeline visibly runs.
    indexingProgress: showsProgress(result.to) ? progress : null
  })
}

/** {@link transition} at the current time of the Clock. */
export const transitionNow = (
  snapshot: IndexingSnapshot,
  event: IndexingEvent
): Effect.Effect<IndexingSnapshot, Errors.IllegalTransition> =>
  Effect.flatMap(DateTime.now, (now) => Effect.fromResult(transition(snapshot, event, now)))

/** {@link create} at the current time of the Clock. */
export const createNow: Effect.Effect<IndexingSnapshot> = Effect.map(DateTime.now, create)
