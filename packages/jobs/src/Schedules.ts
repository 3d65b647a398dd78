/**
 * Scheduled re-materialization and freshness. A sweep (a ClusterCron, so one
 * runner runs it per tick) fires every version whose `nextScheduledAt` has come:
 * `lastRefreshedAt` becomes the tick it fired for and `nextScheduledAt` the next
 * firing strictly after now, so ticks missed while no runner was up fire once, not
 * once each. The refresh itself is a workflow keyed by version and tick, so two
 * sweeps of one tick start one refresh. The sweep also re-evaluates staleness
 * through core's Staleness rules, and archives demoted versions whose package
 * time-to-live (`archiveDemotedAfterSeconds`) has passed.
 */
import { PackageRepo, PackageVersion, Schedule as VersionSchedule, Staleness, VersionRepo } from "@modelgate/core"
import { Cron, DateTime, Effect, Layer, Result, Schema } from "effect"
import { ClusterCron } from "effect/cluster"
import type { Sharding } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { Activity, Workflow } from "effect/workflow"
import type { WorkflowEngine } from "effect/workflow"
import { modifyVersion } from "./internal/Records.ts"
import * as AutoPromoter from "./AutoPromoter.ts"
import * as BuildPlan from "./BuildPlan.ts"

type Record = PackageVersion.VersionRecord

/** Whether a version's schedule is due at `now`: available, scheduled, and its next firing reached. */
export const isDue = (record: Record, now: DateTime.Utc): boolean =>
  record.archiveStatus === "unarchive" && record.declarations.materializationSchedule !== null &&
  record.nextScheduledAt !== null && DateTime.isLessThanOrEqualTo(record.nextScheduledAt, now)

/**
 * The version after firing at `now`: `lastRefreshedAt` is the latest tick not after
 * now (missed ticks collapse into it), `nextScheduledAt` the first tick after now.
 */
export const fire = (record: Record, now: DateTime.Utc): Record => {
  const expression = record.declarations.materializationSchedule
  if (expression === null || record.nextScheduledAt === null) return record
  const parsed = VersionSchedule.parseCron(expression)
  if (Result.isFailure(parsed)) return record
  const next = DateTime.fromDateUnsafe(Cron.next(parsed.success, now))
  // The latest tick not after now: step from the stored tick while the next one is still due.
  let fired = record.nextScheduledAt
  for (let i = 0; i < 100_000; i++) {
    const after = DateTime.fromDateUnsafe(Cron.next(parsed.success, fired))
    if (DateTime.isGreaterThan(after, now)) break
    fired = after
  }
  return { ...record, lastRefreshedAt: fired, nextScheduledAt: next }
}

/**
 * The served artifacts of a version for staleness: its materialized sources, as
 * one artifact whose data is as of the last refresh (or the last build), and
 * whose window is the version's freshness window.
 */
export const artifactsOf = (record: Record): ReadonlyArray<Staleness.Artifact> =>
  record.materialization === "none" || record.materialization === "unsupported"
    ? []
    : [{
      dataAsOf: record.lastRefreshedAt ?? (record.materialization === "succeeded" ? record.updatedAt : null),
      freshnessWindowSeconds: Staleness.effectiveWindowSeconds([record.declarations.materializationFreshnessWindowSeconds]),
      buildFailed: record.materialization === "failed",
      refreshInProgress: record.materialization === "running",
      refreshDisarmed: false,
      estimatedBuildSeconds: null
    }]

/** The version with `stale`, `staleSince` and `staleReasons` evaluated at `now`; undefined when unchanged. */
export const withStaleness = (record: Record, now: DateTime.Utc): Record | undefined => {
  const s = Staleness.evaluateVersion(artifactsOf(record), now)
  const same = s.stale === record.stale && s.staleReasons.join() === record.staleReasons.join() &&
    (s.staleSince === null ? record.staleSince === null : record.staleSince !== null && DateTime.Equivalence(s.staleSince, record.staleSince))
  return same ? undefined : { ...record, stale: s.stale, staleSince: s.staleSince, staleReasons: s.staleReasons }
}

/** One scheduled refresh of a version's persist sources, keyed by version and tick. */
export const Refresh = Workflow.make("modelgate/ScheduledRefresh", {
  payload: { organization: Schema.String, environment: Schema.String, package: Schema.String, version: Schema.String, tick: Schema.String },
  idempotencyKey: (p) => `${p.organization}/${p.environment}/${p.package}/${p.version}@${p.tick}`
})

/** Registers the refresh workflow: rebuilds the version's buildable persist sources in plan order. */
export const layerRefresh: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | VersionRepo.VersionRepo | BuildPlan.Materializer> =
  Refresh.toLayer((p) =>
    Activity.make({
      name: "materialize",
      execute: Effect.gen(function*() {
        const ref = { organization: p.organization, environment: p.environment, package: p.package, version: p.version }
        const materializer = yield* BuildPlan.Materializer
        const record = yield* (yield* VersionRepo.VersionRepo).get(ref)
        if (record.materialization === "unsupported" || record.buildPlan === null) return
        const location = { ...ref, location: record.location }
        let failed: string | undefined
        for (const node of record.buildPlan.nodes) {
          const done = yield* Effect.result(materializer.materialize(location, node))
          // A rebuilt source serves its (new) table; a failed one serves live.
          yield* modifyVersion(ref, (r) =>
            Effect.succeed({ ...r, builds: BuildPlan.withBuild(r.builds, node.sourceId, Result.getOrUndefined(done)) }))
          if (Result.isFailure(done)) {
            failed = done.failure.message
            break
          }
        }
        yield* modifyVersion(ref, (r) =>
          Effect.succeed({ ...r, materialization: failed === undefined ? "succeeded" as const : "failed" as const }))
      }).pipe(Effect.orDie)
    }))

/** The versions that declare a schedule or a freshness window (read from storage's version table). */
const scheduledRefs = Effect.gen(function*() {
  const sql = yield* SqlClient
  return yield* sql<{ readonly organization: string; readonly environment: string; readonly package: string; readonly id: string }>`
    SELECT organization, environment, package, id FROM package_versions
    WHERE record->'declarations'->>'materializationSchedule' IS NOT NULL
       OR record->'declarations'->>'materializationFreshnessWindowSeconds' IS NOT NULL
       OR (record->>'stale')::boolean`
}).pipe(Effect.orDie)

/**
 * One sweep at the current time: fires due schedules (starting their refresh) and
 * re-evaluates staleness. Returns the refs fired.
 */
export const sweep: Effect.Effect<
  ReadonlyArray<PackageVersion.VersionRef>,
  never,
  SqlClient | VersionRepo.VersionRepo | WorkflowEngine.WorkflowEngine
> = Effect.gen(function*() {
  const now = yield* DateTime.now
  const fired: Array<PackageVersion.VersionRef> = []
  for (const row of yield* scheduledRefs) {
    const ref = { organization: row.organization, environment: row.environment, package: row.package, version: row.id }
    let tick: DateTime.Utc | null = null
    yield* modifyVersion(ref, (record) =>
      Effect.sync(() => {
        tick = null
        const afterFire = isDue(record, now) ? fire(record, now) : record
        if (afterFire !== record) tick = afterFire.lastRefreshedAt
        const evaluated = withStaleness(afterFire, now) ?? afterFire
        return evaluated === record ? undefined : evaluated
      })).pipe(Effect.orDie)
    const firedTick: DateTime.Utc | null = tick
    if (firedTick !== null) {
      fired.push(ref)
      yield* Refresh.execute({ ...ref, tick: DateTime.formatIso(firedTick) }, { discard: true })
    }
  }
  return fired
})

/**
 * The work of one cron tick: the schedule and freshness {@link sweep}, then auto-archive of
 * demoted versions whose package time-to-live passed ({@link AutoPromoter.archiveSweep}).
 */
export const tick: Effect.Effect<
  void,
  never,
  SqlClient | VersionRepo.VersionRepo | PackageRepo.PackageRepo | WorkflowEngine.WorkflowEngine
> = Effect.gen(function*() {
  yield* sweep
  yield* AutoPromoter.archiveSweep
}).pipe(Effect.withSpan("Schedules.tick"))

/** Every minute, in UTC: the cadence of {@link layerCron}. */
export const everyMinute: Cron.Cron = Cron.parseUnsafe("* * * * *", "UTC")

/**
 * `execute` as a cluster cron job on `cron`: each tick runs once, on whichever runner owns the
 * cron's entity (tests inject a short cadence or an observable `execute`).
 */
export const layerCronWith = <E, R>(cron: Cron.Cron, execute: Effect.Effect<void, E, R>, name = "modelgate/ScheduleSweep") =>
  ClusterCron.make({ name, cron, execute })

/** The {@link tick} as a cluster cron job: every minute, on one runner. */
export const layerCron: Layer.Layer<
  never,
  never,
  Sharding.Sharding | SqlClient | VersionRepo.VersionRepo | PackageRepo.PackageRepo | WorkflowEngine.WorkflowEngine
> = layerCronWith(everyMinute, tick)
