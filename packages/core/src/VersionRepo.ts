/**
 * The storage port of package versions. Versions are immutable by id; their
 * lifecycle fields change through `save`, which checks the revision read, so two
 * writers (an archive request and a build job) never silently overwrite each other.
 * Adapters also enforce at most one armed version per package.
 */
import { Context, Effect, Layer, Semaphore } from "effect"
import { Conflict, type ResourceNotFound } from "./Errors.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"
import type { VersionRecord, VersionRef } from "./PackageVersion.ts"

/** A package's place in the hierarchy. */
export interface PackageRef {
  readonly organization: string
  readonly environment: string
  readonly package: string
}

/** The ref of a stored version. */
export const refOf = (record: VersionRecord): VersionRef => ({
  organization: record.organization,
  environment: record.environment,
  package: record.package,
  version: record.id
})

/** Storage of package versions. */
export class VersionRepo extends Context.Service<VersionRepo, {
  /** Stores a new version; CONFLICT when the id exists in the package, or when it is armed while another is. */
  readonly insert: (record: VersionRecord) => Effect.Effect<VersionRecord, Conflict>
  readonly get: (ref: VersionRef) => Effect.Effect<VersionRecord, ResourceNotFound>
  /** The package's versions, oldest first. */
  readonly list: (pkg: PackageRef) => Effect.Effect<ReadonlyArray<VersionRecord>>
  /** Saves a record read at `record.revision`; CONFLICT if it changed since or the arming invariant breaks. */
  readonly save: (record: VersionRecord) => Effect.Effect<VersionRecord, Conflict | ResourceNotFound>
}>()("@modelgate/core/VersionRepo") {
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    VersionRepo,
    Effect.gen(function*() {
      const key = (ref: VersionRef) => MemoryTable.keyOf(ref.organization, ref.environment, ref.package, ref.version)
      const table = yield* MemoryTable.makeRevisioned<VersionRecord>((r) => key(refOf(r)), (k) => `Package version ${k}`)
      const samePackage = (a: VersionRecord, b: VersionRecord) =>
        a.organization === b.organization && a.environment === b.environment && a.package === b.package
      // At most one armed version per package, as the SQL adapters' partial unique index.
      const checkArmed = (record: VersionRecord): Effect.Effect<void, Conflict> =>
        record.promoteWhenReady
          ? Effect.flatMap(
            table.list((r) => samePackage(r, record) && r.id !== record.id && r.promoteWhenReady),
            (others) =>
              others.length === 0 ? Effect.void : Effect.fail(
                new Conflict({ message: `Package ${record.organization}/${record.environment}/${record.package} already has an armed version` })
              )
          )
          : Effect.void
      // Check and write under one permit, so the invariant holds under concurrent writers.
      const lock = yield* Semaphore.make(1)
      return VersionRepo.of({
        insert: (record) => lock.withPermits(1)(Effect.andThen(checkArmed(record), table.insert(record))),
        get: (ref) => table.get(key(ref)),
        list: (pkg) =>
          Effect.map(
            table.list((r) => r.organization === pkg.organization && r.environment === pkg.environment && r.package === pkg.package),
            (rows) => [...rows].sort((a, b) => a.createdAt.epochMilliseconds - b.createdAt.epochMilliseconds)
          ),
        save: (record) => lock.withPermits(1)(Effect.andThen(checkArmed(record), table.save(record)))
      })
    })
  )
}
