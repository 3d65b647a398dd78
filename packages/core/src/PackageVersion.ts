/**
 * The package version resource and its stored record. The record holds the facts
 * (archive state, materialization and indexing sides, promotion times, schedule and
 * freshness declarations); the resource derives `buildStatus` from them and shows
 * `indexingProgress` and `buildPlan` only on the single-version read, as the spec says.
 */
import { Effect, Schema } from "effect"
import * as ArchiveStatus from "./ArchiveStatus.ts"
import type { PackageVersions } from "./AutoPromote.ts"
import * as BuildStatus from "./BuildStatus.ts"
import { ValidationError } from "./Errors.ts"
import type { Package } from "./Hierarchy.ts"
import * as Naming from "./Naming.ts"
import * as Schedule from "./Schedule.ts"
import * as Staleness from "./Staleness.ts"

const optional = Schema.optionalKey
const Time = Schema.DateTimeUtcFromString

/** Indexing-failure metadata. */
export const VersionMetadata = Schema.Struct({
  displayErrorMessage: optional(Schema.String),
  rawErrorMessage: optional(Schema.String)
}).annotate({ identifier: "VersionMetadata" })
/** Indexing-failure metadata. */
export type VersionMetadata = typeof VersionMetadata.Type

/** A persist source in the build plan. */
export const BuildPlanNode = Schema.Struct({
  sourceId: Schema.String,
  name: Schema.String,
  connectionName: Schema.String,
  modelPath: Schema.String
})
/** A dependency edge of the build plan: `from` depends on `to`. */
export const BuildPlanEdge = Schema.Struct({ from: Schema.String, to: Schema.String })

/** The dependency graph of a version's persist sources. */
export const BuildPlan = Schema.Struct({
  nodes: Schema.Array(BuildPlanNode),
  edges: Schema.Array(BuildPlanEdge)
}).annotate({ identifier: "BuildPlan" })
/** The dependency graph of a version's persist sources. */
export type BuildPlan = typeof BuildPlan.Type

/**
 * A persist source's last succeeded build: its BuildID and table. Internal to the record (the
 * runtime serves the table); the buildPlan resource keeps the spec's shape.
 */
export const BuiltSource = Schema.Struct({
  sourceId: Schema.String,
  buildId: Schema.String,
  table: Schema.String
}).annotate({ identifier: "BuiltSource" })
/** A persist source's last succeeded build. */
export type BuiltSource = typeof BuiltSource.Type

/** The freshness and schedule declarations of a version, ingested from the package manifest. */
export const Materialization = Schema.Struct({
  scope: Schema.NullOr(Schedule.MaterializationScope),
  materializationSchedule: Schema.NullOr(Schedule.CronExpression),
  materializationFreshnessWindowSeconds: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  materializationFreshnessFallback: Schema.NullOr(Staleness.FreshnessFallback)
}).pipe(
  Schema.check(Schedule.isScheduleXorWindow, Schedule.isScheduleScopeLegal)
).annotate({ identifier: "Materialization" })
/** The freshness and schedule declarations of a version. */
export type Materialization = typeof Materialization.Type

/** No schedule, no window: the version materializes only on publish or on-demand rebuild. */
export const noMaterialization: Materialization = {
  scope: null,
  materializationSchedule: null,
  materializationFreshnessWindowSeconds: null,
  materializationFreshnessFallback: null
}

/** The PackageVersion resource as read. */
export const PackageVersion = Schema.Struct({
  id: Naming.SemanticVersion,
  createdAt: Time,
  updatedAt: Time,
  archiveStatus: ArchiveStatus.ArchiveStatus,
  stale: Schema.Boolean,
  staleSince: Schema.NullOr(Time),
  staleReasons: Schema.Array(Staleness.StaleReason),
  promoteWhenReady: Schema.Boolean,
  promotedAt: Schema.NullOr(Time),
  demotedAt: Schema.NullOr(Time),
  metadata: VersionMetadata,
  indexingProgress: Schema.NullOr(BuildStatus.IndexingProgress),
  buildStatus: BuildStatus.BuildStatus,
  scope: Schema.NullOr(Schedule.MaterializationScope),
  materializationSchedule: Schema.NullOr(Schema.String),
  nextScheduledAt: Schema.NullOr(Time),
  lastRefreshedAt: Schema.NullOr(Time),
  materializationFreshnessWindowSeconds: Schema.NullOr(Schema.Int),
  materializationFreshnessFallback: Schema.NullOr(Staleness.FreshnessFallback),
  buildPlan: Schema.NullOr(BuildPlan)
}).annotate({ identifier: "PackageVersion" })
/** The PackageVersion resource as read. */
export type PackageVersion = typeof PackageVersion.Type

/** A version's place in the hierarchy. */
export const VersionRef = Schema.Struct({
  organization: Schema.String,
  environment: Schema.String,
  package: Schema.String,
  version: Schema.String
})
/** A version's place in the hierarchy. */
export type VersionRef = typeof VersionRef.Type

/** The stored facts of a version, from which the resource is derived. */
export const VersionRecord = Schema.Struct({
  organization: Schema.String,
  environment: Schema.String,
  package: Schema.String,
  id: Naming.SemanticVersion,
  createdAt: Time,
  updatedAt: Time,
  archiveStatus: ArchiveStatus.ArchiveStatus,
  promoteWhenReady: Schema.Boolean,
  promotedAt: Schema.NullOr(Time),
  demotedAt: Schema.NullOr(Time),
  metadata: VersionMetadata,
  materialization: BuildStatus.MaterializationState,
  indexing: BuildStatus.IndexingState,
  indexingProgress: Schema.NullOr(BuildStatus.IndexingProgress),
  declarations: Materialization,
  nextScheduledAt: Schema.NullOr(Time),
  lastRefreshedAt: Schema.NullOr(Time),
  stale: Schema.Boolean,
  staleSince: Schema.NullOr(Time),
  staleReasons: Schema.Array(Staleness.StaleReason),
  buildPlan: Schema.NullOr(BuildPlan),
  /**
   * The persist sources whose last build succeeded, with their tables; absent on records written
   * before builds were recorded (their sources serve live until rebuilt). Never part of the resource.
   */
  builds: optional(Schema.Array(BuiltSource)),
  /** Where the version's files are kept (an opaque key of the file store). */
  location: Schema.String,
  /** Optimistic-concurrency revision, bumped by every save. */
  revision: Schema.Int
}).annotate({ identifier: "VersionRecord" })
/** The stored facts of a version. */
export type VersionRecord = typeof VersionRecord.Type

/** The built tables a runtime serves for a version: its persist sources whose last build succeeded. */
export const builtTablesOf = (record: VersionRecord): ReadonlyArray<{ readonly buildId: string; readonly table: string }> =>
  (record.builds ?? []).map(({ buildId, table }) => ({ buildId, table }))

/** The build status of a stored version. */
export const buildStatusOf = (record: VersionRecord): BuildStatus.BuildStatus =>
  BuildStatus.derive({ materialization: record.materialization, indexing: record.indexing })

/** A package's versions as the AutoPromote rules see them (core's publish and promote, and the jobs' reconciler). */
export const promotionState = (pkg: Package, records: ReadonlyArray<VersionRecord>): PackageVersions => ({
  latestId: pkg.latestVersionId,
  versions: records.map((r) => ({
    id: r.id,
    promoteWhenReady: r.promoteWhenReady,
    promotedAt: r.promotedAt,
    demotedAt: r.demotedAt,
    buildStatus: buildStatusOf(r),
    archiveStatus: r.archiveStatus
  }))
})

/**
 * The resource view of a record. `detail` is the single-version read: it carries
 * `indexingProgress` while indexing runs and the `buildPlan`; a list read has both null.
 */
export const toResource = (record: VersionRecord, options: { readonly detail: boolean }): PackageVersion => ({
  id: record.id,
  createdAt: record.createdAt,
  updatedAt: record.updatedAt,
  archiveStatus: record.archiveStatus,
  stale: record.stale,
  staleSince: record.stale ? record.staleSince : null,
  staleReasons: record.stale ? record.staleReasons : [],
  promoteWhenReady: record.promoteWhenReady,
  promotedAt: record.promotedAt,
  demotedAt: record.demotedAt,
  metadata: record.metadata,
  indexingProgress: options.detail && BuildStatus.showsIndexingProgress(record.indexing) ? record.indexingProgress : null,
  buildStatus: buildStatusOf(record),
  scope: record.declarations.scope,
  materializationSchedule: record.declarations.materializationSchedule,
  nextScheduledAt: record.declarations.materializationSchedule === null ? null : record.nextScheduledAt,
  lastRefreshedAt: record.declarations.materializationSchedule === null ? null : record.lastRefreshedAt,
  materializationFreshnessWindowSeconds: record.declarations.materializationFreshnessWindowSeconds,
  materializationFreshnessFallback: record.declarations.materializationFreshnessWindowSeconds === null
    ? null
    : record.declarations.materializationFreshnessFallback,
  buildPlan: options.detail && record.buildPlan !== null && record.buildPlan.nodes.length > 0 ? record.buildPlan : null
})

/**
 * The body of PATCH version. Only `archiveStatus` is honoured; every other field is
 * read-only and may be sent back from a read (it is ignored), except a different `id`.
 */
export const VersionPatch = Schema.Struct({
  id: optional(Schema.String),
  archiveStatus: optional(Schema.String)
}).annotate({ identifier: "VersionPatch" })
/** The body of PATCH version. */
export type VersionPatch = typeof VersionPatch.Type

/** The archive status a PATCH asks for: `archive` or `unarchive`, and the id must be the path's. */
export const requestedStatus = Effect.fnUntraced(function*(versionId: string, patch: VersionPatch) {
  if (patch.id !== undefined && patch.id !== versionId) {
    return yield* new ValidationError({ message: `Body id ${JSON.stringify(patch.id)} does not match the version ${JSON.stringify(versionId)}` })
  }
  if (patch.archiveStatus === undefined) {
    return yield* new ValidationError({ message: "archiveStatus is required: archive or unarchive" })
  }
  if (patch.archiveStatus !== "archive" && patch.archiveStatus !== "unarchive") {
    return yield* new ValidationError({
      message: `archiveStatus ${JSON.stringify(patch.archiveStatus)} cannot be requested: use archive or unarchive (error_state is set by the system)`
    })
  }
  return patch.archiveStatus
})
