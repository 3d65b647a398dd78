/**
 * Seed files: users, groups, API keys, organizations with their grants,
 * workspaces, environments, connections and packages with versions published
 * from folders. Loading is idempotent (what exists is kept), goes through core's
 * services as the system actor, and resolves relative paths against the seed's folder.
 * `modelgate seed` loads one; the example server loads one at every start.
 */
import { DateTime, Effect, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { dirname, isAbsolute, resolve } from "node:path"
import {
  ApiKeys,
  Connection,
  ConnectionService,
  Errors,
  Naming,
  OrganizationRepo,
  PackageService,
  PermissionRepo,
  Roles,
  UserRepo
} from "@modelgate/core"
import { PackageFiles } from "@modelgate/http"

const Grant = Schema.Struct({ userGroupId: Naming.UserGroupId, permission: Roles.Role })
const WorkspaceGrant = Schema.Struct({ userGroupId: Naming.UserGroupId, permission: Schema.Union([Roles.WorkspaceRole, Roles.Role]) })
const grants = Schema.optionalKey(Schema.Array(Grant))

/** The seed file format (see docs/seed.md). */
export const SeedFile = Schema.Struct({
  auth: Schema.optionalKey(Schema.Struct({
    jwtSecret: Schema.optionalKey(Schema.String),
    issuer: Schema.optionalKey(Schema.String),
    audience: Schema.optionalKey(Schema.String)
  })),
  users: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String, email: Schema.String, displayName: Schema.optionalKey(Schema.String) }))),
  groups: Schema.optionalKey(Schema.Array(Schema.Struct({ name: Schema.String, members: Schema.Array(Schema.String) }))),
  apiKeys: Schema.optionalKey(Schema.Array(Schema.Struct({ key: Schema.String, user: Schema.String, name: Schema.optionalKey(Schema.String), revoked: Schema.optionalKey(Schema.Boolean) }))),
  organizations: Schema.Array(Schema.Struct({
    name: Naming.Identifier,
    grants,
    workspaces: Schema.optionalKey(Schema.Array(Schema.Struct({
      name: Naming.Identifier,
      packages: Schema.optionalKey(Schema.Array(Schema.String)),
      grants: Schema.optionalKey(Schema.Array(WorkspaceGrant))
    }))),
    environments: Schema.optionalKey(Schema.Array(Schema.Struct({
      name: Naming.Identifier,
      grants,
      connections: Schema.optionalKey(Schema.Array(Connection.ConnectionInput)),
      packages: Schema.optionalKey(Schema.Array(Schema.Struct({
        name: Naming.Identifier,
        description: Schema.optionalKey(Schema.String),
        grants,
        autoPromote: Schema.optionalKey(Schema.Boolean),
        versions: Schema.optionalKey(Schema.Array(Schema.Struct({
          id: Naming.SemanticVersion,
          path: Schema.String,
          latest: Schema.optionalKey(Schema.Boolean)
        })))
      })))
    })))
  }))
}).annotate({ identifier: "SeedFile" })
/** A parsed seed file. */
export type SeedFile = typeof SeedFile.Type

/** Reads and validates a seed file; relative paths are resolved against its folder. */
export const read = (path: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({ try: () => readFile(path, "utf8"), catch: () => new Error(`Cannot read the seed file ${path}`) })
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => new Error(`The seed file ${path} is not valid JSON`) })
    const seed = yield* Schema.decodeUnknownEffect(SeedFile)(json, { onExcessProperty: "error", errors: "all" }).pipe(
      Effect.mapError((e) => new Error(`Invalid seed file ${path}: ${e.message}`))
    )
    return { seed, baseDir: dirname(resolve(path)) }
  })

/** The operator: seeds act with every right. */
export const systemActor: Roles.Actor = { userId: "system", groups: [], system: true }

// What already exists is kept: loading twice changes nothing.
const ignoreConflict = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(self, (e): e is Extract<E, Errors.Conflict> => e._tag === "Conflict", () => Effect.void)

/** Applies a seed; returns the default organization (the first one). */
export const apply = Effect.fn("Seed.apply")(function*(seed: SeedFile, baseDir: string) {
  const now = yield* DateTime.now
  const orgs = yield* OrganizationRepo.OrganizationRepo
  const users = yield* UserRepo.UserRepo
  const permissions = yield* PermissionRepo.PermissionRepo
  const connections = yield* ConnectionService.ConnectionService
  const packages = yield* PackageService.PackageService
  const at = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p))
  const grant = (principal: string, scope: Roles.Scope, role: Roles.AnyRole) =>
    Effect.gen(function*() {
      const existing = (yield* permissions.listAt(scope)).find((g) => g.principal === principal)
      if (existing === undefined) yield* permissions.upsert({ principal, scope, role, createdAt: now, updatedAt: now })
    })

  for (const u of seed.users ?? []) yield* ignoreConflict(users.insert({ id: u.id, email: u.email, ...(u.displayName === undefined ? {} : { displayName: u.displayName }), createdAt: now }))
  for (const k of seed.apiKeys ?? []) {
    const hash = ApiKeys.hash(k.key)
    if ((yield* users.findApiKeyByHash(hash)) === undefined) {
      yield* ignoreConflict(users.insertApiKey({ id: `seed-${hash.slice(7, 19)}`, userId: k.user, name: k.name ?? "seed", hash, createdAt: now, revokedAt: k.revoked === true ? now : null, lastUsedAt: null }))
    }
  }
  for (const org of seed.organizations) {
    yield* ignoreConflict(orgs.insertOrganization({ name: org.name, createdAt: now }))
    for (const g of seed.groups ?? []) yield* orgs.putGroup({ organization: org.name, name: g.name, members: g.members, createdAt: now })
    for (const g of org.grants ?? []) yield* grant(g.userGroupId, Roles.organizationScope(org.name), g.permission)
    for (const env of org.environments ?? []) {
      yield* ignoreConflict(orgs.insertEnvironment({ organization: org.name, name: env.name, createdAt: now }))
      for (const g of env.grants ?? []) yield* grant(g.userGroupId, Roles.environmentScope(org.name, env.name), g.permission)
      const envRef = { organization: org.name, environment: env.name }
      for (const c of env.connections ?? []) yield* ignoreConflict(connections.create(systemActor, envRef, c))
      for (const p of env.packages ?? []) {
        yield* ignoreConflict(packages.createPackage(systemActor, envRef, {
          name: p.name,
          ...(p.description === undefined ? {} : { description: p.description }),
          autoPromote: p.autoPromote ?? false
        }))
        const pkgRef = { ...envRef, package: p.name }
        for (const g of p.grants ?? []) yield* grant(g.userGroupId, Roles.packageScope(org.name, env.name, p.name), g.permission)
        for (const v of p.versions ?? []) {
          const files = yield* PackageFiles.fromDirectory(at(v.path))
          yield* ignoreConflict(packages.publish(systemActor, pkgRef, v.id, files))
          if (v.latest === true) {
            const current = yield* packages.getPackage(systemActor, pkgRef)
            if (current.latestVersionId !== v.id) yield* packages.promote(systemActor, { ...pkgRef, version: v.id })
          }
        }
      }
    }
    for (const ws of org.workspaces ?? []) {
      yield* ignoreConflict(orgs.insertWorkspace({ organization: org.name, name: ws.name, createdAt: now }))
      for (const g of ws.grants ?? []) {
        const role: Roles.WorkspaceRole = g.permission === "admin" ? "manager" : g.permission === "modeler" ? "editor" : g.permission
        yield* grant(g.userGroupId, Roles.workspaceScope(org.name, ws.name), role)
      }
      for (const ref of ws.packages ?? []) {
        const [envName, pkgName] = ref.split("/")
        if (envName === undefined || pkgName === undefined) return yield* Effect.fail(new Error(`Workspace package ${ref} must be "environment/package"`))
        const scope = Roles.packageScope(org.name, envName, pkgName)
        const existing = (yield* permissions.listAt(scope)).find((g) => g.workspace === ws.name)
        if (existing === undefined) yield* permissions.upsert({ workspace: ws.name, scope, role: "viewer", createdAt: now, updatedAt: now })
      }
    }
  }
  return seed.organizations[0]?.name
})
