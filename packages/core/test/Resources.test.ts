import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Errors, PackagePermission, PackageVersion, type Roles } from "@modelgate/core"

const t0 = DateTime.makeUnsafe("2026-01-01T00:00:00Z")

const record = (overrides: Partial<PackageVersion.VersionRecord> = {}): PackageVersion.VersionRecord => ({
  organization: "acme", environment: "prod", package: "sales", id: "1.2.0",
  createdAt: t0, updatedAt: t0, archiveStatus: "unarchive", promoteWhenReady: false, promotedAt: null, demotedAt: null,
  metadata: {}, materialization: "none", indexing: "running",
  indexingProgress: { packageProgress: { sourcesTotal: 4, sourcesProcessing: 1, sourcesCompleted: 2, sourcesFailed: 0, entitiesFound: 57 } },
  declarations: PackageVersion.noMaterialization, nextScheduledAt: null, lastRefreshedAt: null,
  stale: false, staleSince: null, staleReasons: [],
  buildPlan: { nodes: [{ sourceId: "s1", name: "daily", connectionName: "pg", modelPath: "m.malloy" }], edges: [] },
  location: "x", revision: 3,
  ...overrides
})

describe("PackageVersion.toResource", () => {
  it("shows indexingProgress and buildPlan only on the single-version read", () => {
    const detail = PackageVersion.toResource(record(), { detail: true })
    assert.strictEqual(detail.indexingProgress?.packageProgress.entitiesFound, 57)
    assert.strictEqual(detail.buildPlan?.nodes.length, 1)
    const listed = PackageVersion.toResource(record(), { detail: false })
    assert.isNull(listed.indexingProgress)
    assert.isNull(listed.buildPlan)
  })
  it("clears indexingProgress once indexing settles, and an empty plan reads as null", () => {
    const done = PackageVersion.toResource(record({ indexing: "succeeded", buildPlan: { nodes: [], edges: [] } }), { detail: true })
    assert.isNull(done.indexingProgress)
    assert.isNull(done.buildPlan)
    assert.strictEqual(done.buildStatus, "READY")
  })
  it("derives buildStatus from the two sides", () => {
    assert.strictEqual(PackageVersion.toResource(record({ indexing: "failed" }), { detail: false }).buildStatus, "FAILED")
    assert.strictEqual(PackageVersion.toResource(record({ materialization: "unsupported", indexing: "succeeded" }), { detail: false }).buildStatus, "UNSUPPORTED")
  })
  it("hides schedule times without a schedule and staleness details when fresh", () => {
    const r = PackageVersion.toResource(record({ nextScheduledAt: t0, lastRefreshedAt: t0, staleSince: t0, staleReasons: ["REFRESH_IN_PROGRESS"] }), { detail: true })
    assert.isNull(r.nextScheduledAt)
    assert.isNull(r.lastRefreshedAt)
    assert.isNull(r.staleSince)
    assert.deepStrictEqual(r.staleReasons, [])
  })
  it("encodes to the wire shape with ISO date-times", () => {
    const wire = Schema.encodeSync(PackageVersion.PackageVersion)(PackageVersion.toResource(record(), { detail: true }))
    assert.strictEqual(wire.createdAt, "2026-01-01T00:00:00.000Z")
    assert.strictEqual(wire.buildStatus, "BUILDING")
  })
})

describe("PackageVersion.Materialization", () => {
  const decode = Schema.decodeUnknownExit(PackageVersion.Materialization)
  it("rejects a schedule together with a freshness window", () => {
    assert.strictEqual(decode({ scope: "version", materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: 60, materializationFreshnessFallback: null })._tag, "Failure")
    assert.strictEqual(decode({ scope: "version", materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: null, materializationFreshnessFallback: null })._tag, "Success")
    assert.strictEqual(decode({ scope: null, materializationSchedule: null, materializationFreshnessWindowSeconds: 60, materializationFreshnessFallback: "stale_ok" })._tag, "Success")
  })
  it("allows a schedule only with scope version, and only a 5-field cron", () => {
    assert.strictEqual(decode({ scope: "package", materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: null, materializationFreshnessFallback: null })._tag, "Failure")
    assert.strictEqual(decode({ scope: null, materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: null, materializationFreshnessFallback: null })._tag, "Failure")
    assert.strictEqual(decode({ scope: "version", materializationSchedule: "0 0 * * * *", materializationFreshnessWindowSeconds: null, materializationFreshnessFallback: null })._tag, "Failure")
  })
})

describe("PackageVersion.requestedStatus", () => {
  it.effect("honours archive and unarchive only", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* PackageVersion.requestedStatus("1.0.0", { archiveStatus: "archive" }), "archive")
      assert.strictEqual(yield* PackageVersion.requestedStatus("1.0.0", { id: "1.0.0", archiveStatus: "unarchive" }), "unarchive")
      for (const patch of [{}, { archiveStatus: "error_state" }, { archiveStatus: "deleted" }, { id: "2.0.0", archiveStatus: "archive" }]) {
        const error = yield* PackageVersion.requestedStatus("1.0.0", patch).pipe(Effect.flip)
        assert.strictEqual(error.code, "VALIDATION_ERROR")
      }
    }))
})

describe("PackagePermission.prepare", () => {
  const actor: Roles.Actor = { userId: "u1", email: "Ada@Example.com", groups: [] }
  const decode = Schema.decodeUnknownSync(PackagePermission.PackagePermissionInput)
  it.effect("needs exactly one grantee and a role for a grant", () =>
    Effect.gen(function*() {
      const ok = yield* PackagePermission.prepare(decode({ userGroupId: "user:Bob@Example.com", permission: "modeler" }), actor, { requestPermission: false })
      assert.deepStrictEqual(ok.grantee, { _tag: "Principal", userGroupId: "user:bob@example.com" })
      const ws = yield* PackagePermission.prepare(decode({ workspace: "analytics", permission: "viewer" }), actor, { requestPermission: false })
      assert.deepStrictEqual(ws.grantee, { _tag: "Workspace", workspace: "analytics" })
      for (const body of [{ permission: "viewer" }, { userGroupId: "group:a", workspace: "w", permission: "viewer" }, { userGroupId: "group:a" }]) {
        const error = yield* PackagePermission.prepare(decode(body), actor, { requestPermission: false }).pipe(Effect.flip)
        assert.strictEqual(error.code, "VALIDATION_ERROR")
      }
    }))
  it.effect("makes an access request for the caller, viewer by default", () =>
    Effect.gen(function*() {
      const request = yield* PackagePermission.prepare(decode({}), actor, { requestPermission: true })
      assert.deepStrictEqual(request, { grantee: { _tag: "Principal", userGroupId: "user:u1" }, permission: "viewer", message: undefined })
      const byEmail = yield* PackagePermission.prepare(decode({ userGroupId: "user:ada@example.com", permission: "modeler" }), actor, { requestPermission: true })
      assert.strictEqual(byEmail.permission, "modeler")
      const other = yield* PackagePermission.prepare(decode({ userGroupId: "user:bob@example.com" }), actor, { requestPermission: true }).pipe(Effect.flip)
      assert.match(other.message, /for the caller/)
    }))
  it("rejects malformed principals and roles at the schema", () => {
    assert.throws(() => decode({ userGroupId: "bob", permission: "viewer" }))
    assert.throws(() => decode({ userGroupId: "user:bob@example.com", permission: "owner" }))
  })
})

describe("Errors", () => {
  it("maps every code to its status in one table", () => {
    const expected: Record<string, number> = {
      VALIDATION_ERROR: 400, AUTHENTICATION_REQUIRED: 401, INSUFFICIENT_PERMISSIONS: 403, RESOURCE_NOT_FOUND: 404,
      CONFLICT: 409, RATE_LIMIT_EXCEEDED: 429, INTERNAL_ERROR: 500, ORGANIZATION_NAME_TAKEN: 409,
      ORGANIZATION_NAME_RESERVED: 409, INVITE_ALREADY_CONSUMED: 409, INVITE_ALREADY_CONSUMED_REVOKE: 409,
      INVITE_INVALID: 400, INVITE_EXPIRED: 400, INVITE_EMAIL_MISMATCH: 403
    }
    assert.deepStrictEqual({ ...Errors.statusByCode }, expected)
    const codes = Errors.errorClasses.map((C) => new C({ message: "m" }).code)
    assert.deepStrictEqual([...codes].sort(), Object.keys(expected).sort())
    for (const C of Errors.errorClasses) {
      const error = new C({ message: "why" })
      assert.deepStrictEqual(Errors.toBody(error), { code: error.code, message: "why" })
      assert.strictEqual(Errors.statusOf(error), expected[error.code])
    }
  })
  it("renders an illegal transition and a failed connection test with their codes", () => {
    const illegal = new Errors.IllegalTransition({ message: "m", machine: "ArchiveStatus", from: "error_state", event: "unarchive" })
    assert.strictEqual(Errors.statusOf(illegal), 409)
    assert.strictEqual(Errors.statusOf(new Errors.ConnectionTestFailed({ message: "m", step: "connect" })), 400)
  })
})

describe("core purity", () => {
  it("imports no module that does I/O", () => {
    const root = join(import.meta.dirname, "../src")
    const files = (dir: string): ReadonlyArray<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)])
    const forbidden = /from\s+"(node:[a-z_/]+|fs|net|http|https|child_process|pg|postgres|mysql2?|@duckdb\/[^"]*|duckdb|@malloydata\/[^"]*|@electric-sql\/[^"]*|effect\/sql[^"]*|@effect\/platform-node[^"]*|@effect\/sql-[^"]*)"/g
    const offenders = files(root).flatMap((f) => [...readFileSync(f, "utf8").matchAll(forbidden)].map((m) => `${f}: ${m[1]}`))
    assert.deepStrictEqual(offenders, [])
    assert.isAbove(files(root).length, 20)
  })
})
