/**
 * Read-modify-save of stored records under optimistic concurrency: the admin API
 * and other jobs write the same rows, so a save that lost the race is recomputed
 * on the fresh record.
 */
import { ConnectionRepo, VersionRepo } from "@modelgate/core"
import type { Errors, PackageVersion } from "@modelgate/core"
import { Effect, Schedule } from "effect"

const conflictRetry = Schedule.exponential("5 millis")

/** Applies `f` to the stored version and saves it; `undefined` from `f` saves nothing. */
export const modifyVersion = <E, R>(
  ref: PackageVersion.VersionRef,
  f: (record: PackageVersion.VersionRecord) => Effect.Effect<PackageVersion.VersionRecord | undefined, E, R>
): Effect.Effect<PackageVersion.VersionRecord, E | Errors.Conflict | Errors.ResourceNotFound, R | VersionRepo.VersionRepo> =>
  Effect.gen(function*() {
    const versions = yield* VersionRepo.VersionRepo
    const record = yield* versions.get(ref)
    const next = yield* f(record)
    return next === undefined ? record : yield* versions.save(next)
  }).pipe(Effect.retry({ while: (e) => isConflict(e), schedule: conflictRetry, times: 30 }))

/** Applies `f` to the stored connection and saves it; `undefined` from `f` saves nothing. */
export const modifyConnection = <E, R>(
  ref: ConnectionRepo.ConnectionRef,
  f: (record: ConnectionRepo.ConnectionRecord) => Effect.Effect<ConnectionRepo.ConnectionRecord | undefined, E, R>
): Effect.Effect<ConnectionRepo.ConnectionRecord, E | Errors.Conflict | Errors.ResourceNotFound, R | ConnectionRepo.ConnectionRepo> =>
  Effect.gen(function*() {
    const connections = yield* ConnectionRepo.ConnectionRepo
    const record = yield* connections.get(ref)
    const next = yield* f(record)
    return next === undefined ? record : yield* connections.save(next)
  }).pipe(Effect.retry({ while: (e) => isConflict(e), schedule: conflictRetry, times: 30 }))

const isConflict = (e: unknown): boolean =>
  typeof e === "object" && e !== null && "_tag" in e && e._tag === "Conflict"
