/**
 * A package version's `buildStatus`, derived (never stored or written) from the
 * state of its two build sides: the materialization of its persist sources and
 * the indexing of its entities. Also owns the version's indexing-progress schema.
 */
import { Schema } from "effect"

/** The derived `buildStatus` of a package version. */
export const BuildStatus = Schema.Literals(["BUILDING", "READY", "FAILED", "UNSUPPORTED"]).annotate({
  identifier: "BuildStatus"
})
/** The derived `buildStatus` of a package version. */
export type BuildStatus = typeof BuildStatus.Type

/** Every build status, in the order of the specification. */
export const buildStatuses: ReadonlyArray<BuildStatus> = BuildStatus.literals

/** The state of one persist source's materialization. */
export const SourceMaterialization = Schema.Literals(["pending", "running", "succeeded", "failed", "unsupported"])
  .annotate({ identifier: "SourceMaterialization" })
/** The state of one persist source's materialization. */
export type SourceMaterialization = typeof SourceMaterialization.Type

/**
 * The materialization side of a version as a whole. `none`: no persist source is
 * declared; `unsupported`: some persist source's dialect cannot be materialized in
 * v0 (DuckDB), so it serves live.
 */
export const MaterializationState = Schema.Literals(["none", "pending", "running", "succeeded", "failed", "unsupported"])
  .annotate({ identifier: "MaterializationState" })
/** The materialization side of a version as a whole. */
export type MaterializationState = typeof MaterializationState.Type

/** Every materialization state. */
export const materializationStates: ReadonlyArray<MaterializationState> = MaterializationState.literals

/** The indexing side of a version: pending and running are "not yet settled". */
export const IndexingState = Schema.Literals(["pending", "running", "succeeded", "failed"]).annotate({
  identifier: "IndexingState"
})
/** The indexing side of a version. */
export type IndexingState = typeof IndexingState.Type

/** Every indexing state. */
export const indexingStates: ReadonlyArray<IndexingState> = IndexingState.literals

/** What `buildStatus` is derived from. */
export const BuildInput = Schema.Struct({
  materialization: MaterializationState,
  indexing: IndexingState
}).annotate({ identifier: "BuildInput" })
/** What `buildStatus` is derived from. */
export type BuildInput = typeof BuildInput.Type

const working = (state: MaterializationState | IndexingState): boolean => state === "pending" || state === "running"

/**
 * Derives `buildStatus`, evaluating the spec's rules strictly in order: FAILED if
 * either side failed; else BUILDING while either side still works; else
 * UNSUPPORTED when some persist source cannot be materialized in v0 and indexing
 * has settled; else READY.
 */
export const derive = (input: BuildInput): BuildStatus => {
  // 1. Either materialization or indexing failed.
  if (input.materialization === "failed" || input.indexing === "failed") return "FAILED"
  // 2. Either side is still working (materializing, or indexing not yet settled).
  if (working(input.materialization) || working(input.indexing)) return "BUILDING"
  // 3. Nothing is built for sources in a dialect v0 cannot materialize; indexing
  //    is settled here, because rules 1 and 2 took every other indexing state.
  if (input.materialization === "unsupported") return "UNSUPPORTED"
  // 4. Both sides at a servable rest: materialized (or nothing to materialize) and indexed.
  return "READY"
}

/**
 * Folds per-source materialization states into the version's side. Any failure
 * wins, then any work in progress, then any unsupported source (one source that
 * serves live is enough for the version to be UNSUPPORTED rather than READY).
 */
export const materializationOf = (sources: ReadonlyArray<SourceMaterialization>): MaterializationState => {
  if (sources.length === 0) return "none"
  if (sources.includes("failed")) return "failed"
  if (sources.includes("running")) return "running"
  if (sources.includes("pending")) return "pending"
  if (sources.includes("unsupported")) return "unsupported"
  return "succeeded"
}

/** Whether a build status is a servable resting state (READY or UNSUPPORTED), which auto-promote waits for. */
export const isServable = (status: BuildStatus): boolean => status === "READY" || status === "UNSUPPORTED"

/** Whether the version's `indexingProgress` is populated: only while indexing is in progress. */
export const showsIndexingProgress = (indexing: IndexingState): boolean => indexing === "running"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** `packageProgress`: counts of a version's indexing run. */
export const PackageIndexingProgress = Schema.Struct({
  sourcesTotal: Count,
  sourcesProcessing: Count,
  sourcesCompleted: Count,
  sourcesFailed: Count,
  entitiesFound: Count
}).annotate({ identifier: "PackageIndexingProgress" })
/** `packageProgress`: counts of a version's indexing run. */
export type PackageIndexingProgress = typeof PackageIndexingProgress.Type

/** A version's `indexingProgress` (the resource makes it nullable). */
export const IndexingProgress = Schema.Struct({
  packageProgress: PackageIndexingProgress
}).annotate({ identifier: "IndexingProgress" })
/** A version's `indexingProgress`. */
export type IndexingProgress = typeof IndexingProgress.Type
