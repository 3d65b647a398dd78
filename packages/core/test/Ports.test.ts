import { assert, describe, it, layer } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import {
  ConnectionRepo,
  ConnectionTester,
  Notifier,
  OrganizationRepo,
  PackageRepo,
  PackageVersion,
  PermissionRepo,
  Roles,
  SecretCipher,
  UserRepo,
  VersionRepo
} from "@modelgate/core"

const t0 = DateTime.makeUnsafe("2026-01-01T00:00:00Z")

const connection = (name: string): ConnectionRepo.ConnectionRecord => ({
  organization: "acme",
  environment: "prod",
  settings: { name, type: "postgres", excludeAllTables: false, postgresConnection: { host: "db", password: "pw" } },
  indexingStatus: "UNKNOWN",
  indexingStatusLastUpdated: t0,
  indexingProgress: null,
  createdAt: t0,
  updatedAt: t0,
  revision: 0
})

const version = (id: string, armed = false): PackageVersion.VersionRecord => ({
  organization: "acme",
  environment: "prod",
  package: "sales",
  id,
  createdAt: t0,
  updatedAt: t0,
  archiveStatus: "unarchive",
  promoteWhenReady: armed,
  promotedAt: null,
  demotedAt: null,
  metadata: {},
  materialization: "none",
  indexing: "pending",
  indexingProgress: null,
  declarations: PackageVersion.noMaterialization,
  nextScheduledAt: null,
  lastRefreshedAt: null,
  stale: false,
  staleSince: null,
  staleReasons: [],
  buildPlan: null,
  location: `acme/prod/sales/${id}`,
  revision: 0
})

layer(ConnectionRepo.ConnectionRepo.layerMemory)("ConnectionRepo (memory)", (it) => {
  it.effect("inserts, conflicts on a duplicate name, lists by environment", () =>
    Effect.gen(function*() {
      const repo = yield* ConnectionRepo.ConnectionRepo
      yield* repo.insert(connection("a"))
      const duplicate = yield* repo.insert(connection("a")).pipe(Effect.flip)
      assert.strictEqual(duplicate.code, "CONFLICT")
      yield* repo.insert({ ...connection("b"), environment: "dev" })
      const listed = yield* repo.list({ organization: "acme", environment: "prod" })
      assert.deepStrictEqual(listed.map((r) => r.settings.name), ["a"])
    }))

  it.effect("saves with optimistic concurrency: a stale revision is a CONFLICT", () =>
    Effect.gen(function*() {
      const repo = yield* ConnectionRepo.ConnectionRepo
      const read = yield* repo.get({ organization: "acme", environment: "prod", name: "a" })
      const first = yield* repo.save({ ...read, indexingStatus: "SCHEMA_INDEXING" })
      assert.strictEqual(first.revision, read.revision + 1)
      const lost = yield* repo.save({ ...read, indexingStatus: "FAILED" }).pipe(Effect.flip)
      assert.strictEqual(lost.code, "CONFLICT")
      const now = yield* repo.get({ organization: "acme", environment: "prod", name: "a" })
      assert.strictEqual(now.indexingStatus, "SCHEMA_INDEXING")
    }))

  it.effect("removes, then reports RESOURCE_NOT_FOUND", () =>
    Effect.gen(function*() {
      const repo = yield* ConnectionRepo.ConnectionRepo
      yield* repo.remove({ organization: "acme", environment: "prod", name: "a" })
      const missing = yield* repo.get({ organization: "acme", environment: "prod", name: "a" }).pipe(Effect.flip)
      assert.strictEqual(missing.code, "RESOURCE_NOT_FOUND")
    }))
})

layer(VersionRepo.VersionRepo.layerMemory)("VersionRepo (memory)", (it) => {
  it.effect("holds at most one armed version per package, even under concurrent writers", () =>
    Effect.gen(function*() {
      const repo = yield* VersionRepo.VersionRepo
      const ids = Array.from({ length: 20 }, (_, i) => `1.0.${i}`)
      yield* Effect.forEach(ids, (id) => repo.insert(version(id)), { discard: true })
      const read = yield* repo.list({ organization: "acme", environment: "prod", package: "sales" })
      const results = yield* Effect.forEach(read, (v) => Effect.result(repo.save({ ...v, promoteWhenReady: true })), { concurrency: "unbounded" })
      const armed = (yield* repo.list({ organization: "acme", environment: "prod", package: "sales" })).filter((v) => v.promoteWhenReady)
      assert.strictEqual(armed.length, 1)
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
    }))
})

layer(PackageRepo.PackageRepo.layerMemory)("PackageRepo (memory)", (it) => {
  it.effect("saves with optimistic concurrency", () =>
    Effect.gen(function*() {
      const repo = yield* PackageRepo.PackageRepo
      const pkg = yield* repo.insert({
        organization: "acme", environment: "prod", name: "sales", autoPromote: true, archiveDemotedAfterSeconds: null,
        latestVersionId: null, createdAt: t0, updatedAt: t0, revision: 0
      })
      yield* repo.save({ ...pkg, latestVersionId: "1.0.0" })
      const stale = yield* repo.save({ ...pkg, latestVersionId: "2.0.0" }).pipe(Effect.flip)
      assert.strictEqual(stale.code, "CONFLICT")
    }))
})

layer(PermissionRepo.PermissionRepo.layerMemory)("PermissionRepo (memory)", (it) => {
  it.effect("upserts one grant per grantee and scope, keeping createdAt, and yields role grants", () =>
    Effect.gen(function*() {
      const repo = yield* PermissionRepo.PermissionRepo
      const scope = Roles.packageScope("acme", "prod", "sales")
      const first = yield* repo.upsert({ principal: "user:ada@example.com", scope, role: "viewer", createdAt: t0, updatedAt: t0 })
      assert.isTrue(first.created)
      const later = DateTime.makeUnsafe("2026-02-01T00:00:00Z")
      const second = yield* repo.upsert({ principal: "user:ada@example.com", scope, role: "modeler", createdAt: later, updatedAt: later })
      assert.isFalse(second.created)
      assert.strictEqual(DateTime.formatIso(second.record.createdAt), DateTime.formatIso(t0))
      yield* repo.upsert({ workspace: "analytics", scope, role: "viewer", createdAt: t0, updatedAt: t0 })
      const at = yield* repo.listAt(scope)
      assert.strictEqual(at.length, 2)
      const grants = at.map(PermissionRepo.toGrant).filter((g) => g !== undefined)
      assert.deepStrictEqual(grants.map((g) => g.role), ["modeler"])
      const org = yield* repo.listGrants("acme")
      assert.strictEqual(org.length, 2)
      assert.strictEqual((yield* repo.listGrants("other")).length, 0)
    }))
})

layer(OrganizationRepo.OrganizationRepo.layerMemory)("OrganizationRepo (memory)", (it) => {
  it.effect("keeps the hierarchy and group membership", () =>
    Effect.gen(function*() {
      const repo = yield* OrganizationRepo.OrganizationRepo
      yield* repo.insertOrganization({ name: "acme", createdAt: t0 })
      yield* repo.insertEnvironment({ organization: "acme", name: "prod", createdAt: t0 })
      assert.strictEqual((yield* repo.insertEnvironment({ organization: "acme", name: "prod", createdAt: t0 }).pipe(Effect.flip)).code, "CONFLICT")
      yield* repo.putGroup({ organization: "acme", name: "analysts", members: ["u1", "u2"], createdAt: t0 })
      assert.deepStrictEqual((yield* repo.groupsOf("acme", "u2")).map((g) => g.name), ["analysts"])
      assert.deepStrictEqual(yield* repo.groupsOf("acme", "u3"), [])
      assert.strictEqual((yield* repo.getEnvironment("acme", "dev").pipe(Effect.flip)).code, "RESOURCE_NOT_FOUND")
    }))
})

layer(UserRepo.UserRepo.layerMemory)("UserRepo (memory)", (it) => {
  it.effect("finds users by e-mail case-insensitively and refuses a duplicate address", () =>
    Effect.gen(function*() {
      const repo = yield* UserRepo.UserRepo
      yield* repo.insert({ id: "u1", email: "Ada@Example.com", createdAt: t0 })
      assert.strictEqual((yield* repo.findByEmail("ada@example.COM"))?.id, "u1")
      assert.strictEqual((yield* repo.insert({ id: "u2", email: "ada@example.com", createdAt: t0 }).pipe(Effect.flip)).code, "CONFLICT")
      yield* repo.insertApiKey({ id: "k1", userId: "u1", name: "ci", hash: "h1", createdAt: t0, revokedAt: null, lastUsedAt: null })
      const key = yield* repo.findApiKeyByHash("h1")
      assert.strictEqual(key?.id, "k1")
      if (key !== undefined) yield* repo.saveApiKey({ ...key, revokedAt: t0 })
      assert.isNotNull((yield* repo.findApiKeyByHash("h1"))?.revokedAt)
    }))
})

describe("ConnectionTester (memory)", () => {
  it.effect("reports a failure as VALIDATION_ERROR naming the step", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectionTester.ConnectionTester
      const error = yield* tester.test(connection("a").settings).pipe(Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.strictEqual(error.step, "connect")
      assert.notInclude(error.message, "pw")
    }).pipe(Effect.provide(ConnectionTester.ConnectionTester.layerMemoryWith(() => ({ ok: false, step: "connect", message: "refused" })))))
})

describe("Notifier (memory)", () => {
  it.effect("keeps what it was asked to send", () =>
    Effect.gen(function*() {
      const notifier = yield* Notifier.Notifier
      yield* notifier.notify({ kind: "permission.granted", recipients: ["ada@example.com"], subject: "s", body: "b" })
      const sent = yield* (yield* Notifier.NotifierOutbox).sent
      assert.deepStrictEqual(sent.map((n) => n.recipients), [["ada@example.com"]])
    }).pipe(Effect.provide(Notifier.layerMemory)))
})

describe("SecretCipher (AES-256-GCM)", () => {
  const key = (byte: number) => new Uint8Array(32).fill(byte)
  const rotated = SecretCipher.SecretCipher.layerAesGcm({ keys: new Map([["k1", key(1)], ["k2", key(2)]]), current: "k2" })
  const old = SecretCipher.SecretCipher.layerAesGcm({ keys: new Map([["k1", key(1)]]), current: "k1" })

  it.effect("seals with a fresh nonce each time and opens with the same associated data", () =>
    Effect.gen(function*() {
      const cipher = yield* SecretCipher.SecretCipher
      const a = yield* cipher.seal("hunter2", "acme/prod/c#password")
      const b = yield* cipher.seal("hunter2", "acme/prod/c#password")
      assert.notStrictEqual(a, b)
      assert.notInclude(a, "hunter2")
      assert.strictEqual(cipher.keyIdOf(a), "test")
      assert.strictEqual(yield* cipher.open(a, "acme/prod/c#password"), "hunter2")
    }).pipe(Effect.provide(SecretCipher.SecretCipher.layerMemory)))

  it.effect("refuses a value moved to another record or field, and a tampered value", () =>
    Effect.gen(function*() {
      const cipher = yield* SecretCipher.SecretCipher
      const sealed = yield* cipher.seal("hunter2", "acme/prod/c#password")
      assert.strictEqual((yield* cipher.open(sealed, "acme/prod/d#password").pipe(Effect.flip))._tag, "SecretDecryptFailed")
      const flipped = sealed.slice(0, -4) + (sealed.endsWith("AAAA") ? "BBBB" : "AAAA")
      assert.strictEqual((yield* cipher.open(flipped, "acme/prod/c#password").pipe(Effect.flip))._tag, "SecretDecryptFailed")
    }).pipe(Effect.provide(SecretCipher.SecretCipher.layerMemory)))

  it.effect("after rotation, old key ids still open and new values use the current key", () =>
    Effect.gen(function*() {
      const sealedOld = yield* Effect.gen(function*() {
        return yield* (yield* SecretCipher.SecretCipher).seal("s1", "ad")
      }).pipe(Effect.provide(old))
      const cipher = yield* SecretCipher.SecretCipher
      assert.strictEqual(yield* cipher.open(sealedOld, "ad"), "s1")
      assert.strictEqual(cipher.keyIdOf(yield* cipher.seal("s2", "ad")), "k2")
    }).pipe(Effect.provide(rotated)))

  it.effect("names a missing key id clearly", () =>
    Effect.gen(function*() {
      const cipher = yield* SecretCipher.SecretCipher
      const error = yield* cipher.open("gone:AAAA", "ad").pipe(Effect.flip)
      assert.match(error.message, /No secret key with id "gone"/)
    }).pipe(Effect.provide(old)))

  it.effect("refuses a key of the wrong length at construction", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(SecretCipher.SecretCipher.layerAesGcm({ keys: new Map([["k", new Uint8Array(16)]]), current: "k" })))
      assert.isTrue(exit._tag === "Failure")
    }).pipe(Effect.scoped))
})

describe("SecretCipher.parseKeyring", () => {
  const b64 = (byte: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(byte)))
  it("reads id=base64 pairs with the current key marked by '*'", () => {
    const parsed = SecretCipher.parseKeyring(`old=${b64(1)}, *new=${b64(2)}`)
    assert.isTrue(parsed._tag === "Success" && parsed.success.current === "new" && parsed.success.keys.size === 2)
    const single = SecretCipher.parseKeyring(`only=${b64(3)}`)
    assert.isTrue(single._tag === "Success" && single.success.current === "only")
  })
  it("refuses what would be ambiguous or unsafe, naming the problem", () => {
    const cases: ReadonlyArray<[string, RegExp]> = [
      ["", /no keys/],
      [`a=${b64(1)},b=${b64(2)}`, /mark the current key/],
      [`*a=${b64(1)},*b=${b64(2)}`, /only one key may be marked/],
      [`a=${btoa("short")}`, /entry 1: the key must decode to 32 bytes/],
      [`a=${b64(1)},a=${b64(2)}`, /given twice/],
      [`a:b=${b64(1)}`, /entry 1 is not id=base64/],
      ["a=!!!", /entry 1: the key is not valid base64/],
      [b64(1), /entry 1: the key must decode to 32 bytes, got 0/]
    ]
    for (const [text, message] of cases) {
      const parsed = SecretCipher.parseKeyring(text)
      assert.isTrue(parsed._tag === "Failure", text)
      if (parsed._tag === "Failure") {
        assert.match(parsed.failure, message)
        assert.notInclude(parsed.failure, b64(1).slice(0, 8))
      }
    }
  })
})
