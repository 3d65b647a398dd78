import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Schema } from "effect"
import {
  Access,
  Connection,
  ConnectionRepo,
  ConnectionService,
  ConnectionTester,
  Notifier,
  OrganizationRepo,
  PackageRepo,
  PackageService,
  PackageStore,
  PermissionRepo,
  Roles,
  UserRepo,
  VersionRepo
} from "@modelgate/core"

const t0 = DateTime.makeUnsafe("2026-01-01T00:00:00Z")
const admin: Roles.Actor = { userId: "root", groups: [] }
const viewer: Roles.Actor = { userId: "vera", groups: [] }
const system: Roles.Actor = { userId: "system", groups: [], system: true }
const input = Schema.decodeUnknownSync(Connection.ConnectionInput)

const ports = (tester: Layer.Layer<ConnectionTester.ConnectionTester>) =>
  Layer.mergeAll(
    ConnectionRepo.ConnectionRepo.layerMemory,
    VersionRepo.VersionRepo.layerMemory,
    PackageRepo.PackageRepo.layerMemory,
    PermissionRepo.PermissionRepo.layerMemory,
    OrganizationRepo.OrganizationRepo.layerMemory,
    UserRepo.UserRepo.layerMemory,
    PackageStore.PackageStore.layerMemory,
    Notifier.layerMemory,
    tester
  )

const services = (tester = ConnectionTester.ConnectionTester.layerMemory) =>
  Layer.mergeAll(ConnectionService.ConnectionService.layer, PackageService.PackageService.layer).pipe(
    Layer.provideMerge(Access.Access.layer),
    Layer.provideMerge(ports(tester))
  )

const setup = Effect.gen(function*() {
  const orgs = yield* OrganizationRepo.OrganizationRepo
  const grants = yield* PermissionRepo.PermissionRepo
  yield* orgs.insertOrganization({ name: "acme", createdAt: t0 })
  yield* orgs.insertEnvironment({ organization: "acme", name: "prod", createdAt: t0 })
  yield* grants.upsert({ principal: "user:root", scope: Roles.organizationScope("acme"), role: "admin", createdAt: t0, updatedAt: t0 })
  yield* grants.upsert({ principal: "user:vera", scope: Roles.environmentScope("acme", "prod"), role: "viewer", createdAt: t0, updatedAt: t0 })
})

const env = { organization: "acme", environment: "prod" }
const ref = { ...env, name: "pg" }

describe("ConnectionService", () => {
  it.effect("creates UNKNOWN (queued), and an update while indexing runs sets RETRY", () =>
    Effect.gen(function*() {
      yield* setup
      const service = yield* ConnectionService.ConnectionService
      const repo = yield* ConnectionRepo.ConnectionRepo
      const created = yield* service.create(admin, env, input({ name: "pg", type: "postgres", postgresConnection: { host: "db", password: "s3cret" } }))
      assert.strictEqual(created.indexingStatus, "UNKNOWN")
      assert.notInclude(JSON.stringify(created), "s3cret")
      const stored = yield* repo.get(ref)
      yield* repo.save({ ...stored, indexingStatus: "SCHEMA_INDEXING", indexingProgress: { schemaProgress: { tablesTotal: 4, tablesProcessing: 1, tablesCompleted: 1, tablesFailed: 0, columnsTotal: null, columnsCompleted: null } } })
      const detail = yield* service.get(admin, ref)
      assert.strictEqual(detail.indexingProgress?.schemaProgress?.tablesTotal, 4)
      const listed = yield* service.list(admin, env)
      assert.isNull(listed[0]?.indexingProgress)
      const updated = yield* service.update(admin, ref, input({ type: "postgres", postgresConnection: { host: "db2" } }))
      assert.strictEqual(updated.indexingStatus, "RETRY")
      assert.strictEqual((yield* repo.get(ref)).settings.postgresConnection?.password, "s3cret")
    }).pipe(Effect.provide(services())))

  it.effect("an update during indexing is saved although the job saves progress during every connection test; it tests once", () => {
    let tests = 0
    // Each test takes long enough for the running indexing job to save its progress meanwhile.
    const racingTester = Layer.effect(ConnectionTester.ConnectionTester, Effect.gen(function*() {
      const repo = yield* ConnectionRepo.ConnectionRepo
      return ConnectionTester.ConnectionTester.of({
        test: () =>
          Effect.gen(function*() {
            tests++
            const found = yield* Effect.result(repo.get(ref))
            if (found._tag === "Success" && found.success.indexingStatus === "SCHEMA_INDEXING") {
              yield* Effect.orDie(repo.save({ ...found.success, indexingStatusLastUpdated: DateTime.add(t0, { seconds: tests }) }))
            }
            return { elapsedMillis: 0 }
          })
      })
    }))
    return Effect.gen(function*() {
      yield* setup
      const service = yield* ConnectionService.ConnectionService
      const repo = yield* ConnectionRepo.ConnectionRepo
      yield* service.create(admin, env, input({ name: "pg", type: "postgres", postgresConnection: { host: "db" } }))
      yield* repo.save({ ...(yield* repo.get(ref)), indexingStatus: "SCHEMA_INDEXING" })
      const updated = yield* service.update(admin, ref, input({ type: "postgres", postgresConnection: { host: "db2" } }))
      assert.strictEqual(updated.indexingStatus, "RETRY")
      assert.strictEqual((yield* repo.get(ref)).settings.postgresConnection?.host, "db2")
      assert.strictEqual(tests, 2)
    }).pipe(Effect.provide(ConnectionService.ConnectionService.layer.pipe(
      Layer.provide(racingTester),
      Layer.provideMerge(Access.Access.layer),
      Layer.provideMerge(ports(ConnectionTester.ConnectionTester.layerMemory))
    )))
  })

  it.effect("a failed pre-save test saves nothing and names the step", () =>
    Effect.gen(function*() {
      yield* setup
      const service = yield* ConnectionService.ConnectionService
      const error = yield* service.create(admin, env, input({ name: "pg", type: "postgres", postgresConnection: { host: "down" } })).pipe(Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.match(error.message, /connect/)
      assert.strictEqual((yield* service.get(admin, ref).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
    }).pipe(Effect.provide(services(ConnectionTester.ConnectionTester.layerMemoryWith((s) =>
      s.postgresConnection?.host === "down" ? { ok: false, step: "connect", message: "refused" } : { ok: true }
    )))))

  it.effect("viewers read but cannot update (403); outsiders do not see the environment (404)", () =>
    Effect.gen(function*() {
      yield* setup
      const service = yield* ConnectionService.ConnectionService
      yield* service.create(system, env, input({ name: "pg", type: "postgres", postgresConnection: { host: "db" } }))
      assert.strictEqual((yield* service.get(viewer, ref)).name, "pg")
      assert.strictEqual((yield* service.update(viewer, ref, input({ type: "postgres", postgresConnection: { host: "x" } })).pipe(Effect.flip)).code, "INSUFFICIENT_PERMISSIONS")
      assert.strictEqual((yield* service.get({ userId: "stranger", groups: [] }, ref).pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
    }).pipe(Effect.provide(services())))
})

describe("PackageService", () => {
  const files = new Map([["publisher.json", new TextEncoder().encode("{\"name\":\"shop\"}")], ["shop.malloy", new TextEncoder().encode("source: s is duckdb.table('x')")]])
  const pkg = { ...env, package: "shop" }

  it.effect("publish arms at most one version under auto-promote; promote moves latest and demotes the previous", () =>
    Effect.gen(function*() {
      yield* setup
      const service = yield* PackageService.PackageService
      yield* service.createPackage(admin, env, { name: "shop", autoPromote: true })
      const v1 = yield* service.publish(admin, pkg, "1.0.0", files)
      assert.isTrue(v1.promoteWhenReady)
      yield* service.publish(admin, pkg, "1.1.0", files)
      const armed = (yield* service.listVersions(admin, pkg)).filter((v) => v.promoteWhenReady).map((v) => v.id)
      assert.deepStrictEqual(armed, ["1.1.0"])
      yield* service.promote(admin, { ...pkg, version: "1.0.0" })
      const promoted = yield* service.promote(admin, { ...pkg, version: "1.1.0" })
      assert.isNotNull(promoted.promotedAt)
      assert.isFalse(promoted.promoteWhenReady)
      const previous = yield* service.getVersion(admin, { ...pkg, version: "1.0.0" })
      assert.isNotNull(previous.demotedAt)
      assert.strictEqual((yield* service.getPackage(admin, pkg)).latestVersionId, "1.1.0")
    }).pipe(Effect.provide(services())))

  it.effect("archive and unarchive; error_state cannot be requested; a republished id is a CONFLICT", () =>
    Effect.gen(function*() {
      yield* setup
      const service = yield* PackageService.PackageService
      yield* service.createPackage(admin, env, { name: "shop" })
      yield* service.publish(admin, pkg, "1.0.0", files)
      const vref = { ...pkg, version: "1.0.0" }
      assert.strictEqual((yield* service.updateStatus(admin, vref, { archiveStatus: "archive" })).archiveStatus, "archive")
      assert.strictEqual((yield* service.updateStatus(admin, vref, { archiveStatus: "archive" })).archiveStatus, "archive")
      assert.strictEqual((yield* service.updateStatus(admin, vref, { archiveStatus: "unarchive" })).archiveStatus, "unarchive")
      assert.strictEqual((yield* service.updateStatus(admin, vref, { archiveStatus: "error_state" }).pipe(Effect.flip)).code, "VALIDATION_ERROR")
      assert.strictEqual((yield* service.publish(admin, pkg, "1.0.0", files).pipe(Effect.flip)).code, "CONFLICT")
      assert.strictEqual((yield* service.updateStatus(viewer, vref, { archiveStatus: "archive" }).pipe(Effect.flip)).code, "INSUFFICIENT_PERMISSIONS")
    }).pipe(Effect.provide(services())))

  // File caches outside the database (the runtime's package folders) are keyed by location.
  it.effect("the same version id published in two stores gets two locations", () =>
    Effect.gen(function*() {
      const publishOnce = Effect.gen(function*() {
        yield* setup
        const service = yield* PackageService.PackageService
        yield* service.createPackage(admin, env, { name: "shop" })
        yield* service.publish(admin, pkg, "1.0.0", files)
        return (yield* (yield* VersionRepo.VersionRepo).get({ ...pkg, version: "1.0.0" })).location
      })
      const first = yield* publishOnce.pipe(Effect.provide(services()))
      const second = yield* publishOnce.pipe(Effect.provide(services()))
      assert.match(first, /^acme\/prod\/shop\/1\.0\.0\//)
      assert.notStrictEqual(first, second)
    }))
})
