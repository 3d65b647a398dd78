/**
 * One conformance suite for every storage port of core. The same tests run
 * against the in-memory layers, PGlite and the PostgreSQL server, so every
 * adapter keeps the same contract (conflicts, not-found, revisions, invariants).
 * Each test makes its own organization, so tests never see each other's rows.
 */
import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer } from "effect"
import {
  type Connection,
  ConnectionRepo,
  type Errors,
  type Hierarchy,
  OrganizationRepo,
  PackageRepo,
  PackageStore,
  PackageVersion,
  PermissionRepo,
  Roles,
  UserRepo,
  VersionRepo
} from "@modelgate/core"
import type { Repositories } from "../src/Storage.ts"

const t0 = DateTime.makeUnsafe("2026-01-01T00:00:00.000Z")
const t1 = DateTime.makeUnsafe("2026-02-01T00:00:00.000Z")
let counter = 0
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${(counter++).toString(36)}`

/** An organization with one environment and one package, created through the ports. */
export const scaffold: Effect.Effect<
  { readonly organization: string; readonly environment: string; readonly package: string; readonly pkg: Hierarchy.Package },
  Errors.Conflict,
  OrganizationRepo.OrganizationRepo | PackageRepo.PackageRepo
> = Effect.gen(function*() {
  const orgs = yield* OrganizationRepo.OrganizationRepo
  const packages = yield* PackageRepo.PackageRepo
  const organization = unique("org")
  yield* orgs.insertOrganization({ name: organization, createdAt: t0 })
  yield* orgs.insertEnvironment({ organization, name: "prod", createdAt: t0 })
  const pkg = yield* packages.insert({
    organization, environment: "prod", name: "sales", autoPromote: true, archiveDemotedAfterSeconds: 3600,
    latestVersionId: null, createdAt: t0, updatedAt: t0, revision: 0
  })
  return { organization, environment: "prod", package: "sales", pkg }
})

/** Connection settings with a secret in several places. */
export const settings = (name: string, password = "pw-1"): Connection.ConnectionSettings => ({
  name,
  type: "postgres",
  excludeAllTables: false,
  proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: "tunnel", privateKey: "PRIVATE KEY", privateKeyPass: "pass" } },
  postgresConnection: { host: "db.internal", port: 5432, databaseName: "sales", userName: "reader", password, sslmode: "no-verify" },
  includeTables: ["public.*"]
})

/** A stored connection record. */
export const connection = (organization: string, name: string, password?: string): ConnectionRepo.ConnectionRecord => ({
  organization,
  environment: "prod",
  settings: settings(name, password),
  indexingStatus: "UNKNOWN",
  indexingStatusLastUpdated: t0,
  indexingProgress: null,
  createdAt: t0,
  updatedAt: t0,
  revision: 0
})

/** A stored version record. */
export const version = (organization: string, id: string, armed = false): PackageVersion.VersionRecord => ({
  organization, environment: "prod", package: "sales", id,
  createdAt: t0, updatedAt: t0, archiveStatus: "unarchive", promoteWhenReady: armed, promotedAt: null, demotedAt: null,
  metadata: {}, materialization: "none", indexing: "pending", indexingProgress: null,
  declarations: PackageVersion.noMaterialization, nextScheduledAt: null, lastRefreshedAt: null,
  stale: false, staleSince: null, staleReasons: [], buildPlan: null, location: `${organization}/prod/sales/${id}`, revision: 0
})

const iso = (t: DateTime.Utc | null) => (t === null ? null : DateTime.formatIso(t))

/** Runs the whole conformance suite against `layer`. */
export const conformance = <E>(label: string, storage: Layer.Layer<Repositories, E>) =>
  layer(storage, { timeout: 120_000 })(`storage conformance: ${label}`, (it) => {
    it.effect("connections: insert and get round-trip every field, secrets included", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        const record = { ...connection(organization, "warehouse"), indexingProgress: { schemaProgress: { tablesTotal: 3, tablesProcessing: 1, tablesCompleted: 1, tablesFailed: 0, columnsTotal: 12, columnsCompleted: 4 } } }
        const inserted = yield* repo.insert(record)
        assert.strictEqual(inserted.revision, 0)
        const read = yield* repo.get({ organization, environment: "prod", name: "warehouse" })
        assert.deepStrictEqual(read.settings, record.settings)
        assert.deepStrictEqual(read.indexingProgress, record.indexingProgress)
        assert.strictEqual(read.indexingStatus, "UNKNOWN")
        assert.strictEqual(iso(read.indexingStatusLastUpdated), iso(t0))
        assert.strictEqual(iso(read.createdAt), iso(t0))
      }))

    it.effect("connections: a duplicate name in one environment is a CONFLICT; lists are per environment", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        yield* repo.insert(connection(organization, "b"))
        yield* repo.insert(connection(organization, "a"))
        const error = yield* repo.insert(connection(organization, "a")).pipe(Effect.flip)
        assert.strictEqual(error.code, "CONFLICT")
        const listed = yield* repo.list({ organization, environment: "prod" })
        assert.deepStrictEqual(listed.map((c) => c.settings.name), ["a", "b"])
        assert.deepStrictEqual(yield* repo.list({ organization, environment: "dev" }), [])
      }))

    it.effect("connections: save bumps the revision and refuses a stale one", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        const ref = { organization, environment: "prod", name: "c" }
        const first = yield* repo.insert(connection(organization, "c"))
        const saved = yield* repo.save({ ...first, settings: settings("c", "pw-2"), indexingStatus: "SCHEMA_INDEXING", updatedAt: t1 })
        assert.strictEqual(saved.revision, 1)
        const stale = yield* repo.save({ ...first, settings: settings("c", "pw-3") }).pipe(Effect.flip)
        assert.strictEqual(stale.code, "CONFLICT")
        const read = yield* repo.get(ref)
        assert.strictEqual(read.settings.postgresConnection?.password, "pw-2")
        assert.strictEqual(read.indexingStatus, "SCHEMA_INDEXING")
        assert.strictEqual(iso(read.updatedAt), iso(t1))
      }))

    it.effect("connections: remove, then RESOURCE_NOT_FOUND for get, save and remove", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        const ref = { organization, environment: "prod", name: "gone" }
        const record = yield* repo.insert(connection(organization, "gone"))
        yield* repo.remove(ref)
        assert.strictEqual((yield* repo.get(ref).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
        assert.strictEqual((yield* repo.save(record).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
        assert.strictEqual((yield* repo.remove(ref).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
      }))

    it.effect("versions: insert, get and list oldest first; a duplicate id is a CONFLICT", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* VersionRepo.VersionRepo
        yield* repo.insert({ ...version(organization, "1.1.0"), createdAt: t1 })
        yield* repo.insert({
          ...version(organization, "1.0.0"),
          buildPlan: { nodes: [{ sourceId: "s", name: "n", connectionName: "c", modelPath: "m.malloy" }], edges: [] },
          metadata: { displayErrorMessage: "d" }
        })
        const error = yield* repo.insert(version(organization, "1.0.0")).pipe(Effect.flip)
        assert.strictEqual(error.code, "CONFLICT")
        const listed = yield* repo.list({ organization, environment: "prod", package: "sales" })
        assert.deepStrictEqual(listed.map((v) => v.id), ["1.0.0", "1.1.0"])
        const read = yield* repo.get({ organization, environment: "prod", package: "sales", version: "1.0.0" })
        assert.strictEqual(read.buildPlan?.nodes[0]?.modelPath, "m.malloy")
        assert.strictEqual(read.metadata.displayErrorMessage, "d")
        assert.strictEqual((yield* repo.get({ organization, environment: "prod", package: "sales", version: "9.9.9" }).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
      }))

    it.effect("versions: at most one armed version per package, on insert and on save", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* VersionRepo.VersionRepo
        yield* repo.insert(version(organization, "1.0.0", true))
        assert.strictEqual((yield* repo.insert(version(organization, "1.1.0", true)).pipe(Effect.flip)).code, "CONFLICT")
        const other = yield* repo.insert(version(organization, "1.2.0"))
        assert.strictEqual((yield* repo.save({ ...other, promoteWhenReady: true }).pipe(Effect.flip)).code, "CONFLICT")
        const armed = yield* repo.get({ organization, environment: "prod", package: "sales", version: "1.0.0" })
        yield* repo.save({ ...armed, promoteWhenReady: false })
        const now = yield* repo.get({ organization, environment: "prod", package: "sales", version: "1.2.0" })
        const saved = yield* repo.save({ ...now, promoteWhenReady: true })
        assert.isTrue(saved.promoteWhenReady)
      }))

    it.effect("versions: save bumps the revision and refuses a stale one", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* VersionRepo.VersionRepo
        const v = yield* repo.insert(version(organization, "2.0.0"))
        const archived = yield* repo.save({ ...v, archiveStatus: "archive", updatedAt: t1 })
        assert.strictEqual(archived.revision, 1)
        assert.strictEqual((yield* repo.save({ ...v, indexing: "running" }).pipe(Effect.flip)).code, "CONFLICT")
        const read = yield* repo.get({ organization, environment: "prod", package: "sales", version: "2.0.0" })
        assert.strictEqual(read.archiveStatus, "archive")
        assert.strictEqual(read.indexing, "pending")
      }))

    it.effect("packages: latest pointer moves with save; revisions guard it", () =>
      Effect.gen(function*() {
        const { organization, pkg } = yield* scaffold
        const packages = yield* PackageRepo.PackageRepo
        const versions = yield* VersionRepo.VersionRepo
        yield* versions.insert(version(organization, "1.0.0"))
        yield* versions.insert(version(organization, "1.1.0"))
        const first = yield* packages.save({ ...pkg, latestVersionId: "1.0.0" })
        assert.strictEqual(first.latestVersionId, "1.0.0")
        const second = yield* packages.save({ ...first, latestVersionId: "1.1.0", updatedAt: t1 })
        assert.strictEqual(second.latestVersionId, "1.1.0")
        assert.strictEqual(second.revision, 2)
        assert.strictEqual((yield* packages.save({ ...first, latestVersionId: "1.0.0" }).pipe(Effect.flip)).code, "CONFLICT")
        const read = yield* packages.get({ organization, environment: "prod", package: "sales" })
        assert.strictEqual(read.latestVersionId, "1.1.0")
        assert.strictEqual((yield* packages.insert(pkg).pipe(Effect.flip)).code, "CONFLICT")
        assert.deepStrictEqual((yield* packages.list({ organization, environment: "prod" })).map((p) => p.name), ["sales"])
      }))

    it.effect("permissions: one grant per grantee and scope; replacing keeps createdAt", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* PermissionRepo.PermissionRepo
        const scope = Roles.packageScope(organization, "prod", "sales")
        const first = yield* repo.upsert({ principal: "user:ada@example.com", scope, role: "viewer", message: "hi", createdAt: t0, updatedAt: t0 })
        assert.isTrue(first.created)
        const second = yield* repo.upsert({ principal: "user:ada@example.com", scope, role: "admin", createdAt: t1, updatedAt: t1 })
        assert.isFalse(second.created)
        assert.strictEqual(second.record.role, "admin")
        assert.strictEqual(iso(second.record.createdAt), iso(t0))
        assert.strictEqual(iso(second.record.updatedAt), iso(t1))
        yield* repo.upsert({ workspace: "analytics", scope, role: "viewer", createdAt: t0, updatedAt: t0 })
        yield* repo.upsert({ principal: "group:eng", scope: Roles.environmentScope(organization, "prod"), role: "modeler", createdAt: t0, updatedAt: t0 })
        const at = yield* repo.listAt(scope)
        assert.deepStrictEqual(at.map(PermissionRepo.granteeOf).sort(), ["user:ada@example.com", "workspace:analytics"])
        const all = yield* repo.listGrants(organization)
        assert.strictEqual(all.length, 3)
        assert.strictEqual((yield* repo.listAtAny([scope, Roles.environmentScope(organization, "prod")])).length, 3)
        assert.strictEqual((yield* repo.listAtAny([Roles.environmentScope(organization, "prod")])).length, 1)
        assert.strictEqual((yield* repo.listAtAny([Roles.packageScope(organization, "prod", "other")])).length, 0)
        assert.deepStrictEqual(
          (yield* repo.listAtAny([scope, Roles.environmentScope(organization, "prod")], ["group:eng", "user:nobody"])).map((g) => g.principal),
          ["group:eng"]
        )
        assert.deepStrictEqual(all.map(PermissionRepo.toGrant).filter((g) => g !== undefined).map((g) => g.role).sort(), ["admin", "modeler"])
        yield* repo.remove(scope, "workspace:analytics")
        assert.strictEqual((yield* repo.listAt(scope)).length, 1)
        assert.strictEqual((yield* repo.remove(scope, "workspace:analytics").pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
      }))

    it.effect("permissions: access requests are kept per package", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* PermissionRepo.PermissionRepo
        const request = {
          id: unique("req"), organization, environment: "prod", package: "sales", userGroupId: "user:u1",
          permission: "viewer" as const, status: "pending" as const, createdAt: t0, updatedAt: t0
        }
        yield* repo.insertRequest(request)
        const listed = yield* repo.listRequests(Roles.packageScope(organization, "prod", "sales"))
        assert.deepStrictEqual(listed.map((r) => [r.id, r.userGroupId, r.permission, r.status]), [[request.id, "user:u1", "viewer", "pending"]])
        assert.deepStrictEqual(yield* repo.listRequests(Roles.packageScope(organization, "prod", "other")), [])
      }))

    it.effect("organizations: hierarchy, uniqueness and group membership", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* OrganizationRepo.OrganizationRepo
        assert.strictEqual((yield* repo.insertOrganization({ name: organization, createdAt: t0 }).pipe(Effect.flip)).code, "CONFLICT")
        assert.strictEqual((yield* repo.insertEnvironment({ organization, name: "prod", createdAt: t0 }).pipe(Effect.flip)).code, "CONFLICT")
        yield* repo.insertEnvironment({ organization, name: "dev", description: "sandbox", createdAt: t0 })
        assert.deepStrictEqual((yield* repo.listEnvironments(organization)).map((e) => e.name), ["dev", "prod"])
        assert.strictEqual((yield* repo.getEnvironment(organization, "dev")).description, "sandbox")
        assert.strictEqual((yield* repo.getEnvironment(organization, "qa").pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
        yield* repo.insertWorkspace({ organization, name: "analytics", createdAt: t0 })
        yield* repo.insertDocument({ organization, workspace: "analytics", name: "weekly", createdAt: t0 })
        assert.deepStrictEqual((yield* repo.listDocuments(organization, "analytics")).map((d) => d.name), ["weekly"])
        assert.strictEqual((yield* repo.getWorkspace(organization, "analytics")).name, "analytics")
        yield* repo.putGroup({ organization, name: "eng", members: ["u1", "u2"], createdAt: t0 })
        yield* repo.putGroup({ organization, name: "eng", members: ["u2"], createdAt: t0 })
        assert.deepStrictEqual((yield* repo.groupsOf(organization, "u2")).map((g) => g.name), ["eng"])
        assert.deepStrictEqual(yield* repo.groupsOf(organization, "u1"), [])
        assert.deepStrictEqual((yield* repo.listGroups(organization)).map((g) => [g.name, g.members]), [["eng", ["u2"]]])
        assert.strictEqual((yield* repo.getOrganization(organization)).name, organization)
      }))

    it.effect("package files: written whole, read back byte for byte, replaced on a second put", () =>
      Effect.gen(function*() {
        const store = yield* PackageStore.PackageStore
        const location = unique("loc")
        const bytes = new Uint8Array([0, 1, 2, 255, 128])
        yield* store.put(location, new Map([["publisher.json", new TextEncoder().encode("{}")], ["data/x.parquet", bytes]]))
        const files = yield* store.get(location)
        assert.deepStrictEqual([...files.keys()].sort(), ["data/x.parquet", "publisher.json"])
        assert.deepStrictEqual([...(files.get("data/x.parquet") ?? [])], [...bytes])
        yield* store.put(location, new Map([["m.malloy", new TextEncoder().encode("source: s is duckdb.table('x')")]]))
        assert.deepStrictEqual([...(yield* store.get(location)).keys()], ["m.malloy"])
        assert.strictEqual((yield* store.get(unique("missing")).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
      }))

    it.effect("users: unique by id and by case-insensitive e-mail; API keys by hash", () =>
      Effect.gen(function*() {
        const repo = yield* UserRepo.UserRepo
        const id = unique("u")
        const email = `${id}@Example.com`
        yield* repo.insert({ id, email, createdAt: t0 })
        assert.strictEqual((yield* repo.insert({ id: unique("u"), email: email.toLowerCase(), createdAt: t0 }).pipe(Effect.flip)).code, "CONFLICT")
        assert.strictEqual((yield* repo.findByEmail(email.toUpperCase()))?.id, id)
        assert.isUndefined(yield* repo.findByEmail(`nobody-${id}@example.com`))
        const key = { id: unique("k"), userId: id, name: "ci", hash: unique("h"), createdAt: t0, revokedAt: null, lastUsedAt: null }
        yield* repo.insertApiKey(key)
        assert.strictEqual((yield* repo.findApiKeyByHash(key.hash))?.id, key.id)
        yield* repo.saveApiKey({ ...key, revokedAt: t1 })
        assert.strictEqual(iso((yield* repo.findApiKeyByHash(key.hash))?.revokedAt ?? null), iso(t1))
        assert.strictEqual((yield* repo.listApiKeys(id)).length, 1)
        assert.strictEqual((yield* repo.saveApiKey({ ...key, id: unique("missing") }).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
      }))
  })
