/**
 * Package and version operations of the admin API, over the ports: create a
 * package, publish a version (files stored, record created, armed for auto-promote
 * when the package's policy says so), archive and unarchive, promote, and reads.
 */
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { Access } from "./Access.ts"
import * as ArchiveStatus from "./ArchiveStatus.ts"
import * as AutoPromote from "./AutoPromote.ts"
import { Conflict, type InsufficientPermissions, type ResourceNotFound, ValidationError } from "./Errors.ts"
import type { Package } from "./Hierarchy.ts"
import * as Naming from "./Naming.ts"
import { OrganizationRepo } from "./OrganizationRepo.ts"
import * as PackagePublish from "./PackagePublish.ts"
import { PackageRepo } from "./PackageRepo.ts"
import { type PackageFiles, PackageStore } from "./PackageStore.ts"
import * as PackageVersion from "./PackageVersion.ts"
import { Pipelines } from "./Pipelines.ts"
import * as Roles from "./Roles.ts"
import { type PackageRef, VersionRepo } from "./VersionRepo.ts"
import type { EnvironmentRef } from "./ConnectionService.ts"

/** Any failure of a package or version operation, each with its spec code. */
export type PackageServiceError = ValidationError | InsufficientPermissions | ResourceNotFound | Conflict

/** A new package. */
export interface NewPackage {
  readonly name: string
  readonly description?: string | undefined
  readonly autoPromote?: boolean | undefined
  readonly archiveDemotedAfterSeconds?: number | null | undefined
}

/** Package and version operations. */
export class PackageService extends Context.Service<PackageService, {
  readonly createPackage: (actor: Roles.Actor, env: EnvironmentRef, pkg: NewPackage) => Effect.Effect<Package, PackageServiceError>
  readonly getPackage: (actor: Roles.Actor, ref: PackageRef) => Effect.Effect<Package, PackageServiceError>
  readonly listPackages: (actor: Roles.Actor, env: EnvironmentRef) => Effect.Effect<ReadonlyArray<Package>, PackageServiceError>
  /** Publishes version `id` of a package from its files. */
  readonly publish: (actor: Roles.Actor, ref: PackageRef, id: string, files: PackageFiles) => Effect.Effect<PackageVersion.PackageVersion, PackageServiceError>
  /** Makes a version the package's latest (manual promotion; also a rollback). */
  readonly promote: (actor: Roles.Actor, ref: PackageVersion.VersionRef) => Effect.Effect<PackageVersion.PackageVersion, PackageServiceError>
  /** PATCH version: archive or unarchive. */
  readonly updateStatus: (actor: Roles.Actor, ref: PackageVersion.VersionRef, patch: PackageVersion.VersionPatch) => Effect.Effect<PackageVersion.PackageVersion, PackageServiceError>
  readonly getVersion: (actor: Roles.Actor, ref: PackageVersion.VersionRef) => Effect.Effect<PackageVersion.PackageVersion, PackageServiceError>
  readonly listVersions: (actor: Roles.Actor, ref: PackageRef) => Effect.Effect<ReadonlyArray<PackageVersion.PackageVersion>, PackageServiceError>
}>()("@modelgate/core/PackageService") {
  /** Package operations over the ports. */
  static readonly layer = Layer.effect(
    PackageService,
    Effect.gen(function*() {
      const access = yield* Access
      const packages = yield* PackageRepo
      const versions = yield* VersionRepo
      const store = yield* PackageStore
      const organizations = yield* OrganizationRepo
      const pipelines = yield* Pipelines

      const pkgScope = (ref: PackageRef) => ({ _tag: "Package" as const, organization: ref.organization, environment: ref.environment, package: ref.package })
      const envScope = (env: EnvironmentRef) => ({ _tag: "Environment" as const, organization: env.organization, environment: env.environment })
      const pkgWhat = (ref: PackageRef) => `Package ${ref.package} in ${ref.organization}/${ref.environment}`
      const versionWhat = (ref: PackageVersion.VersionRef) => `Version ${ref.version} of ${ref.organization}/${ref.environment}/${ref.package}`

      const createPackage = Effect.fn("PackageService.createPackage")(function*(actor: Roles.Actor, env: EnvironmentRef, pkg: NewPackage) {
        yield* access.authorize(actor, "package.create", envScope(env), `Environment ${env.organization}/${env.environment}`)
        yield* organizations.getEnvironment(env.organization, env.environment)
        if (!Schema.is(Naming.Identifier)(pkg.name)) {
          return yield* new ValidationError({ message: `Invalid package name ${JSON.stringify(pkg.name)}: letters, digits, '_', '-' and spaces` })
        }
        const now = yield* DateTime.now
        return yield* packages.insert({
          organization: env.organization,
          environment: env.environment,
          name: pkg.name,
          ...(pkg.description === undefined ? {} : { description: pkg.description }),
          autoPromote: pkg.autoPromote ?? false,
          archiveDemotedAfterSeconds: pkg.archiveDemotedAfterSeconds ?? null,
          latestVersionId: null,
          createdAt: now,
          updatedAt: now,
          revision: 0
        })
      })

      const getPackage = Effect.fn("PackageService.getPackage")(function*(actor: Roles.Actor, ref: PackageRef) {
        yield* access.authorize(actor, "version.list", pkgScope(ref), pkgWhat(ref))
        return yield* packages.get(ref)
      })

      // The packages of an environment that the actor has any role on.
      const listPackages = Effect.fn("PackageService.listPackages")(function*(actor: Roles.Actor, env: EnvironmentRef) {
        // Package grants sit below the environment: read those of each package when deciding its visibility.
        const ctx = yield* access.context(actor, envScope(env))
        const all = yield* packages.list(env)
        if (all.length === 0) yield* organizations.getEnvironment(env.organization, env.environment)
        if (ctx.actor.system === true || Roles.effectiveRole(ctx.grants, ctx.actor, envScope(env)) !== undefined) return all
        return yield* Effect.filter(all, (p) =>
          Effect.map(access.context(actor, pkgScope({ ...env, package: p.name })), (c) =>
            Roles.effectiveRole(c.grants, c.actor, pkgScope({ ...env, package: p.name })) !== undefined))
      })

      // Writes the versions whose promotion fields changed, disarming before arming
      // so the one-armed invariant holds at every step, then the package pointer.
      const applyPromotion = Effect.fnUntraced(function*(pkg: Package, records: ReadonlyArray<PackageVersion.VersionRecord>, next: AutoPromote.PackageVersions, now: DateTime.Utc) {
        const byId = new Map(next.versions.map((v) => [v.id, v]))
        const changed = records.filter((r) => {
          const v = byId.get(r.id)
          return v !== undefined && (v.promoteWhenReady !== r.promoteWhenReady || v.promotedAt !== r.promotedAt || v.demotedAt !== r.demotedAt)
        })
        const ordered = [...changed].sort((a, b) => Number(byId.get(a.id)?.promoteWhenReady ?? false) - Number(byId.get(b.id)?.promoteWhenReady ?? false))
        for (const r of ordered) {
          const v = byId.get(r.id)
          if (v !== undefined) yield* versions.save({ ...r, promoteWhenReady: v.promoteWhenReady, promotedAt: v.promotedAt, demotedAt: v.demotedAt, updatedAt: now })
        }
        if (next.latestId !== pkg.latestVersionId) yield* packages.save({ ...pkg, latestVersionId: next.latestId, updatedAt: now })
      })

      const publish = Effect.fn("PackageService.publish")(function*(actor: Roles.Actor, ref: PackageRef, id: string, files: PackageFiles) {
        yield* access.authorize(actor, "version.publish", pkgScope(ref), pkgWhat(ref))
        if (!Schema.is(Naming.SemanticVersion)(id)) {
          return yield* new ValidationError({ message: `Invalid version id ${JSON.stringify(id)}: a semantic version such as 1.2.3 is required` })
        }
        const checked = PackagePublish.validate(files)
        if (checked instanceof ValidationError) return yield* checked
        const pkg = yield* packages.get(ref)
        // Unique per publish: a version id published again after its package was deleted, or the
        // same id in another database, never names files that a cache already holds for an earlier one.
        const location = `${ref.organization}/${ref.environment}/${ref.package}/${id}/${crypto.randomUUID()}`
        const existing = yield* Effect.result(versions.get({ ...ref, version: id }))
        if (existing._tag === "Success") return yield* new Conflict({ message: `Version ${id} of ${pkgWhat(ref)} already exists; versions are immutable` })
        yield* store.put(location, files)
        const now = yield* DateTime.now
        const record: PackageVersion.VersionRecord = {
          organization: ref.organization, environment: ref.environment, package: ref.package, id,
          createdAt: now, updatedAt: now, archiveStatus: ArchiveStatus.atPublish(true),
          promoteWhenReady: false, promotedAt: null, demotedAt: null, metadata: {},
          materialization: "none", indexing: "pending", indexingProgress: null,
          declarations: PackageVersion.noMaterialization, nextScheduledAt: null, lastRefreshedAt: null,
          stale: false, staleSince: null, staleReasons: [], buildPlan: null, location, revision: 0
        }
        yield* versions.insert(record)
        if (pkg.autoPromote) {
          // Concurrent publishes and the build jobs write the same versions: on a
          // conflict the arming is recomputed on fresh state. Only the newest version
          // arms, so an older publish that lost the race never takes the intent back
          // from a newer one ("the newer publish supersedes the older intent").
          yield* Effect.gen(function*() {
            const fresh = yield* packages.get(ref)
            const records = yield* versions.list(ref)
            const newest = records[records.length - 1]?.id === id
            const next = yield* Effect.fromResult(AutoPromote.armAtPublish(newest, PackageVersion.promotionState(fresh, records), id))
            yield* applyPromotion(fresh, records, next, now)
          }).pipe(Effect.retry({ while: (e) => e._tag === "Conflict", times: 20 }))
        }
        // The build (compile check, index, materialization, auto-promote) runs in the background.
        yield* pipelines.versionPublished({ ...ref, version: id })
        return PackageVersion.toResource(yield* versions.get({ ...ref, version: id }), { detail: true })
      })

      const promote = Effect.fn("PackageService.promote")(function*(actor: Roles.Actor, ref: PackageVersion.VersionRef) {
        const pkgRef = { organization: ref.organization, environment: ref.environment, package: ref.package }
        yield* access.authorize(actor, "version.publish", pkgScope(pkgRef), versionWhat(ref))
        const pkg = yield* packages.get(pkgRef)
        const records = yield* versions.list(pkgRef)
        const now = yield* DateTime.now
        const next = yield* Effect.fromResult(AutoPromote.promote(PackageVersion.promotionState(pkg, records), ref.version, now)).pipe(
          Effect.catchTag("IllegalTransition", (e) => Effect.fail(new Conflict({ message: e.message })))
        )
        yield* applyPromotion(pkg, records, next, now)
        return PackageVersion.toResource(yield* versions.get(ref), { detail: true })
      })

      const updateStatus = Effect.fn("PackageService.updateStatus")(function*(actor: Roles.Actor, ref: PackageVersion.VersionRef, patch: PackageVersion.VersionPatch) {
        yield* access.authorize(actor, "version.updateStatus", pkgScope(ref), versionWhat(ref))
        const requested = yield* PackageVersion.requestedStatus(ref.version, patch)
        const saved = yield* Effect.gen(function*() {
          const record = yield* versions.get(ref)
          const next = yield* Effect.fromResult(ArchiveStatus.transition(record.archiveStatus, requested))
          if (next === record.archiveStatus) return record
          return yield* versions.save({ ...record, archiveStatus: next, updatedAt: yield* DateTime.now })
        }).pipe(
          // Another writer saved first: apply the request to the fresh record.
          Effect.retry({ while: (e) => e._tag === "Conflict", times: 3 }),
          Effect.catchTag("IllegalTransition", (e) => Effect.fail(new Conflict({ message: e.message })))
        )
        return PackageVersion.toResource(saved, { detail: true })
      })

      const getVersion = Effect.fn("PackageService.getVersion")(function*(actor: Roles.Actor, ref: PackageVersion.VersionRef) {
        yield* access.authorize(actor, "version.read", pkgScope(ref), versionWhat(ref))
        return PackageVersion.toResource(yield* versions.get(ref), { detail: true })
      })

      const listVersions = Effect.fn("PackageService.listVersions")(function*(actor: Roles.Actor, ref: PackageRef) {
        yield* access.authorize(actor, "version.list", pkgScope(ref), pkgWhat(ref))
        yield* packages.get(ref)
        return (yield* versions.list(ref)).map((r) => PackageVersion.toResource(r, { detail: false }))
      })

      return PackageService.of({ createPackage, getPackage, listPackages, publish, promote, updateStatus, getVersion, listVersions })
    })
  )
}
