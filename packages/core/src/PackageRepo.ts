/**
 * The storage port of packages: the named, versioned units of an environment,
 * with their auto-promote policy and latest-version pointer. `save` checks the
 * revision read, so promotion never races another writer.
 */
import { Context, Effect, Layer } from "effect"
import type { Conflict, ResourceNotFound } from "./Errors.ts"
import type { Package } from "./Hierarchy.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"
import type { PackageRef } from "./VersionRepo.ts"

/** The ref of a stored package. */
export const refOf = (pkg: Package): PackageRef => ({ organization: pkg.organization, environment: pkg.environment, package: pkg.name })

/** Storage of packages. */
export class PackageRepo extends Context.Service<PackageRepo, {
  readonly insert: (pkg: Package) => Effect.Effect<Package, Conflict>
  readonly get: (ref: PackageRef) => Effect.Effect<Package, ResourceNotFound>
  readonly list: (environment: { readonly organization: string; readonly environment: string }) => Effect.Effect<ReadonlyArray<Package>>
  readonly save: (pkg: Package) => Effect.Effect<Package, Conflict | ResourceNotFound>
}>()("@modelgate/core/PackageRepo") {
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    PackageRepo,
    Effect.gen(function*() {
      const key = (ref: PackageRef) => MemoryTable.keyOf(ref.organization, ref.environment, ref.package)
      const table = yield* MemoryTable.makeRevisioned<Package>((p) => key(refOf(p)), (k) => `Package ${k}`)
      return PackageRepo.of({
        insert: table.insert,
        get: (ref) => table.get(key(ref)),
        list: (env) => table.list((p) => p.organization === env.organization && p.environment === env.environment),
        save: table.save
      })
    })
  )
}
