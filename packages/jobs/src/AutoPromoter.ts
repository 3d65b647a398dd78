/**
 * The auto-promote reconciler and auto-archive, as I/O around core's AutoPromote
 * rules: read a package's versions, let the rules decide, write what changed. A
 * version build runs the reconciler when it settles; the periodic cron tick
 * ({@link archiveSweep}) archives demoted versions once their package's
 * time-to-live passed.
 */
import { ArchiveStatus, AutoPromote, PackageRepo, PackageVersion, VersionRepo } from "@modelgate/core"
import type { Errors } from "@modelgate/core"
import { DateTime, Effect, Result, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

/** A package's versions as the AutoPromote rules see them (kept in core, shared with publish and promote). */
export const promotionState = PackageVersion.promotionState

const conflictRetry = Schedule.exponential("5 millis")

const sameTime = (a: DateTime.Utc | null, b: DateTime.Utc | null) =>
  a === null || b === null ? a === b : DateTime.Equivalence(a, b)

/**
 * One reconciler pass over a package: promotes its armed version once servable
 * (never twice), disarms it on terminal failure. Disarming writes come first, so
 * at most one version is armed at every step; the latest pointer moves last.
 */
export const reconcile: (ref: VersionRepo.PackageRef) => Effect.Effect<void, Errors.Conflict, PackageRepo.PackageRepo | VersionRepo.VersionRepo> = Effect.fn("AutoPromoter.reconcile")(function*(ref: VersionRepo.PackageRef) {
  const packages = yield* PackageRepo.PackageRepo
  const versions = yield* VersionRepo.VersionRepo
  yield* Effect.gen(function*() {
    const pkg = yield* packages.get(ref)
    const records = yield* versions.list(ref)
    const before = promotionState(pkg, records)
    const next = yield* AutoPromote.reconcileNow(before)
    const byId = new Map(next.versions.map((v) => [v.id, v]))
    const changed = records.filter((r) => {
      const v = byId.get(r.id)
      return v !== undefined &&
        (v.promoteWhenReady !== r.promoteWhenReady || !sameTime(v.promotedAt, r.promotedAt) || !sameTime(v.demotedAt, r.demotedAt))
    })
    if (changed.length === 0 && next.latestId === pkg.latestVersionId) return
    const now = yield* DateTime.now
    const ordered = [...changed].sort((a, b) =>
      Number(byId.get(a.id)?.promoteWhenReady ?? false) - Number(byId.get(b.id)?.promoteWhenReady ?? false)
    )
    for (const r of ordered) {
      const v = byId.get(r.id)
      if (v !== undefined) {
        yield* versions.save({ ...r, promoteWhenReady: v.promoteWhenReady, promotedAt: v.promotedAt, demotedAt: v.demotedAt, updatedAt: now })
      }
    }
    if (next.latestId !== pkg.latestVersionId) yield* packages.save({ ...pkg, latestVersionId: next.latestId, updatedAt: now })
  }).pipe(
    Effect.retry({ while: (e) => e._tag === "Conflict", schedule: conflictRetry, times: 30 }),
    // The package went away (deleted) while a job ran: nothing to reconcile.
    Effect.catchTag("ResourceNotFound", () => Effect.void)
  )
})

/**
 * Archives the package's demoted versions whose time-to-live (measured from
 * demotedAt, the package's archiveDemotedAfterSeconds) has passed. Returns their ids.
 */
export const archiveDemoted: (ref: VersionRepo.PackageRef) => Effect.Effect<ReadonlyArray<string>, Errors.Conflict, PackageRepo.PackageRepo | VersionRepo.VersionRepo> = Effect.fn("AutoPromoter.archiveDemoted")(function*(ref: VersionRepo.PackageRef) {
  const packages = yield* PackageRepo.PackageRepo
  const versions = yield* VersionRepo.VersionRepo
  return yield* Effect.gen(function*() {
    const pkg = yield* packages.get(ref)
    if (pkg.archiveDemotedAfterSeconds === null) return []
    const records = yield* versions.list(ref)
    const due = yield* AutoPromote.dueForArchiveNow(promotionState(pkg, records), pkg.archiveDemotedAfterSeconds)
    const now = yield* DateTime.now
    for (const id of due) {
      const record = records.find((r) => r.id === id)
      if (record === undefined) continue
      const next = ArchiveStatus.transition(record.archiveStatus, "archive")
      if (Result.isSuccess(next) && next.success !== record.archiveStatus) {
        yield* versions.save({ ...record, archiveStatus: next.success, updatedAt: now })
      }
    }
    return due
  }).pipe(
    Effect.retry({ while: (e) => e._tag === "Conflict", schedule: conflictRetry, times: 30 }),
    Effect.catchTag("ResourceNotFound", () => Effect.succeed([]))
  )
})

/**
 * Auto-archive across the deployment: {@link archiveDemoted} for every package that sets a
 * time-to-live (`archiveDemotedAfterSeconds`; null keeps demoted versions). The periodic sweep
 * runs it; returns the versions archived.
 */
export const archiveSweep: Effect.Effect<ReadonlyArray<PackageVersion.VersionRef>, never, SqlClient | PackageRepo.PackageRepo | VersionRepo.VersionRepo> =
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ readonly organization: string; readonly environment: string; readonly name: string }>`
      SELECT organization, environment, name FROM packages WHERE archive_demoted_after_seconds IS NOT NULL
      ORDER BY organization, environment, name`
    const archived: Array<PackageVersion.VersionRef> = []
    for (const row of rows) {
      const ref = { organization: row.organization, environment: row.environment, package: row.name }
      // One package failing (a storage error, conflicts past the retries) does not stop the others.
      const ids = yield* archiveDemoted(ref).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logWarning("auto-archive failed", ref, cause), []))
      )
      for (const version of ids) archived.push({ ...ref, version })
    }
    return archived
  }).pipe(Effect.orDie, Effect.withSpan("AutoPromoter.archiveSweep"))
