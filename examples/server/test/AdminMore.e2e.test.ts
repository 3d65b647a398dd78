import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { request } from "node:http"
import { resolve } from "node:path"
import { PackageFiles } from "@modelgate/http"
import { call, type Running, serverUrl, start } from "./TestServer.ts"

const demoPackages = resolve(import.meta.dirname, "../demo/packages")

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [{ id: "root", email: "root@acme.test" }, { id: "ada", email: "ada@acme.test" }, { id: "grace", email: "grace@acme.test" }],
  groups: [{ name: "eng", members: ["grace"] }],
  organizations: [{
    name: "acme",
    grants: [{ userGroupId: "user:root", permission: "admin" }],
    environments: [{
      name: "prod",
      connections: [{ name: "warehouse", type: "duckdb" }],
      packages: [
        { name: "shop", versions: [{ id: "1.0.0", path: `${demoPackages}/ecommerce`, latest: true }] },
        { name: "auto", autoPromote: true }
      ]
    }]
  }]
}

const base = (r: Running) => `${r.url}/api/v0/organizations/acme/environments/prod`

// The stored state the write endpoints could touch, as the API shows it.
const snapshot = (r: Running, token: string) =>
  Promise.all([
    call(`${base(r)}/connections/warehouse`, { token }),
    call(`${base(r)}/packages/shop/versions/1.0.0`, { token }),
    call(`${base(r)}/packages/shop/permissions`, { token })
  ]).then((all) => all.map((x) => x.text))

/** Waits until the version's build and the connection's indexing are finished (2 minutes at most). */
const settled = async (r: Running, token: string) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    const [connection, version] = await Promise.all([
      call(`${base(r)}/connections/warehouse`, { token }),
      call(`${base(r)}/packages/shop/versions/1.0.0`, { token })
    ])
    const indexing = (connection.json as { indexingStatus?: string }).indexingStatus
    const build = (version.json as { buildStatus?: string }).buildStatus
    if (indexing !== undefined && ["INDEXED", "FAILED", "SKIPPED"].includes(indexing) && build !== "BUILDING") return
    if (Date.now() > deadline) throw new Error(`background jobs did not settle: indexing ${indexing}, build ${build}`)
    await new Promise((done) => setTimeout(done, 100))
  }
}

const specCodes = new Set(["VALIDATION_ERROR", "AUTHENTICATION_REQUIRED", "INSUFFICIENT_PERMISSIONS", "RESOURCE_NOT_FOUND", "CONFLICT", "RATE_LIMIT_EXCEEDED"])

// Malformed requests: every object carries an unknown field (always invalid), or the body is not JSON,
// or the path or the query string is wrong.
const junkValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 3 }))
const badObject = (known: ReadonlyArray<string>) =>
  fc.tuple(fc.dictionary(fc.constantFrom(...known), junkValue, { maxKeys: known.length }), fc.string({ minLength: 1, maxLength: 8 }), junkValue)
    .map(([fields, key, value]) => JSON.stringify({ ...fields, [`zz_${key}`]: value }))
const badText = fc.oneof(fc.string(), fc.constant("{"), fc.constant("[1,"), fc.constant("null"), fc.string().map((s) => `{"a":${s}`))
const badSegment = fc.oneof(fc.constant("a%2Fb"), fc.constant("%00"), fc.constant("a.b"), fc.constant("*"), fc.string({ minLength: 1, maxLength: 4 }).filter((s) => /[^a-zA-Z0-9_ -]/.test(s)).map(encodeURIComponent))

interface Case {
  readonly path: string
  readonly query: string
  readonly body: string
}

const fuzz = (token: string, method: string, target: (c: Case) => string, known: ReadonlyArray<string>, runs: number) => {
  const cases = fc.record({
    path: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: badSegment }),
    query: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => `?${encodeURIComponent(s)}=${encodeURIComponent(s)}&requestPermission=${encodeURIComponent(s)}`) }),
    body: fc.oneof(badObject(known), badText)
  })
  return fc.assert(
    fc.asyncProperty(cases, async (c) => {
      const response = await call(target(c), { method, token, raw: c.body })
      const code = (response.json as { code?: unknown } | undefined)?.code
      return response.status >= 400 && response.status < 500 && typeof code === "string" && specCodes.has(code)
    }),
    { numRuns: runs }
  )
}

// A request with an explicit Host header (fetch does not let a caller set Host).
const withHost = (url: string, host: string, token: string) =>
  new Promise<{ status: number; body: string }>((done, fail) => {
    const u = new URL(url)
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
      let body = ""
      res.on("data", (c: Buffer) => (body += c.toString()))
      res.on("end", () => done({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", fail)
    req.end()
  })

const suite = (backend: "pglite" | "postgres") => describe(`admin API end to end: robustness and behaviour (${backend})`, () => {
  it.live("the organization of the host: <org>.<admin host> serves that organization only; /health and unknown paths", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend, adminHost: "admin.acme.test" })
      const token = yield* Effect.promise(() => r.token("root"))
      assert.strictEqual((yield* Effect.promise(() => withHost(`${base(r)}/connections`, "acme.admin.acme.test", token))).status, 200)
      const other = yield* Effect.promise(() => withHost(`${base(r)}/connections`, "globex.admin.acme.test", token))
      assert.strictEqual(other.status, 404)
      assert.include(other.body, "RESOURCE_NOT_FOUND")
      assert.strictEqual((yield* Effect.promise(() => withHost(`${base(r)}/connections`, "127.0.0.1", token))).status, 200)
      assert.strictEqual((yield* Effect.promise(() => call(`${r.url}/health`))).status, 200)
      const unknown = yield* Effect.promise(() => call(`${r.url}/api/v0/nothing/here`, { token }))
      assert.deepStrictEqual([unknown.status, (unknown.json as { code?: string }).code], [404, "RESOURCE_NOT_FOUND"])
      assert.strictEqual((yield* Effect.promise(() => call(`${r.url}/api/v0/openapi.json`))).status, 200)
    }).pipe(Effect.scoped), 120_000)

  it.live("fuzz: 2,000 malformed requests per write endpoint are 4xx with a spec code and change nothing", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend })
      const token = yield* Effect.promise(() => r.token("root"))
      // The seed's publish and connection start background jobs: compare once they have settled.
      yield* Effect.promise(() => settled(r, token))
      const before = yield* Effect.promise(() => snapshot(r, token))
      const connectionFields = ["name", "type", "proxy", "postgresConnection", "duckdbConnection", "includeTables", "excludeTables", "excludeAllTables", "template", "fingerprint"]
      yield* Effect.promise(() => fuzz(token, "PATCH", (c) => `${base(r)}/connections/${c.path || "warehouse"}${c.query}`, connectionFields, 2000))
      yield* Effect.promise(() => fuzz(token, "PATCH", (c) => `${base(r)}/packages/shop/versions/${c.path || "1.0.0"}${c.query}`, ["id", "archiveStatus", "buildStatus"], 2000))
      yield* Effect.promise(() => fuzz(token, "POST", (c) => `${base(r)}/packages/${c.path || "shop"}/permissions${c.query}`, ["userGroupId", "workspace", "permission", "message"], 2000))
      const after = yield* Effect.promise(() => snapshot(r, token))
      assert.deepStrictEqual(after, before)
    }).pipe(Effect.scoped), 600_000)

  it.live("rate limits: past the limit a caller gets 429 RATE_LIMIT_EXCEEDED with Retry-After; other callers and routes are not affected", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend, rateLimit: 3 })
      const root = yield* Effect.promise(() => r.token("root"))
      const ada = yield* Effect.promise(() => r.token("ada"))
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) statuses.push((yield* Effect.promise(() => call(`${base(r)}/connections`, { token: root }))).status)
      assert.deepStrictEqual(statuses, [200, 200, 200, 429])
      const limited = yield* Effect.promise(() => call(`${base(r)}/connections`, { token: root }))
      assert.strictEqual((limited.json as { code?: string }).code, "RATE_LIMIT_EXCEEDED")
      assert.isAtLeast(Number(limited.headers.get("retry-after")), 1)
      assert.strictEqual((yield* Effect.promise(() => call(`${base(r)}/packages`, { token: root }))).status, 200)
      assert.notStrictEqual((yield* Effect.promise(() => call(`${base(r)}/connections`, { token: ada }))).status, 429)
    }).pipe(Effect.scoped), 120_000)

  it.live("publish: a .tar.gz upload becomes a version; auto-promote arms it; bad archives are VALIDATION_ERROR; versions are immutable", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend })
      const token = yield* Effect.promise(() => r.token("root"))
      const files = yield* PackageFiles.fromDirectory(`${demoPackages}/flights`)
      const archive = PackageFiles.toTarGz(files)
      const published = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=2.1.0-rc.1`, { method: "POST", token, raw: archive, contentType: "application/gzip" }))
      assert.strictEqual(published.status, 201, published.text)
      assert.deepInclude(published.json as object, { id: "2.1.0-rc.1", archiveStatus: "unarchive", promoteWhenReady: true, buildStatus: "BUILDING" })
      const again = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=2.1.0-rc.1`, { method: "POST", token, raw: archive, contentType: "application/gzip" }))
      assert.strictEqual(again.status, 409)
      const second = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=2.1.0`, { method: "POST", token, raw: archive, contentType: "application/gzip" }))
      assert.strictEqual((second.json as { promoteWhenReady?: boolean }).promoteWhenReady, true)
      const listed = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions`, { token }))
      const armed = (listed.json as ReadonlyArray<{ id: string; promoteWhenReady: boolean; buildPlan: unknown }>).filter((v) => v.promoteWhenReady)
      assert.deepStrictEqual(armed.map((v) => v.id), ["2.1.0"])
      const notTar = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=3.0.0`, { method: "POST", token, raw: new Uint8Array([1, 2, 3]), contentType: "application/gzip" }))
      assert.strictEqual(notTar.status, 400)
      const noModel = PackageFiles.toTarGz(new Map([["publisher.json", new TextEncoder().encode("{}")]]))
      const invalid = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=3.0.0`, { method: "POST", token, raw: noModel, contentType: "application/gzip" }))
      assert.strictEqual(invalid.status, 400)
      assert.match(invalid.text, /no \.malloy model/)
      const badId = yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions?id=01.0.0`, { method: "POST", token, raw: archive, contentType: "application/gzip" }))
      assert.strictEqual(badId.status, 400)
    }).pipe(Effect.scoped), 120_000)

  it.live("permissions: grants with inheritedPermission, access requests by anyone, notifications when asked", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend })
      const root = yield* Effect.promise(() => r.token("root"))
      const ada = yield* Effect.promise(() => r.token("ada", { email: "ada@acme.test" }))
      const grant = yield* Effect.promise(() => call(`${base(r)}/packages/shop/permissions?notifyPeople=true`, {
        method: "POST", token: root, body: { userGroupId: "group:eng", permission: "modeler", message: "welcome" }
      }))
      assert.strictEqual(grant.status, 201, grant.text)
      assert.deepInclude(grant.json as object, { userGroupId: "group:eng", permission: "modeler", message: "welcome" })
      assert.isTrue(r.logs.some((l) => l.includes("notification queued")))
      const inherited = yield* Effect.promise(() => call(`${base(r)}/packages/shop/permissions`, {
        method: "POST", token: root, body: { userGroupId: "user:root", permission: "viewer" }
      }))
      assert.deepInclude(inherited.json as object, { permission: "viewer", inheritedPermission: "admin" })
      const request = yield* Effect.promise(() => call(`${base(r)}/packages/shop/permissions?requestPermission=true&notifyPeople=true`, {
        method: "POST", token: ada, body: { permission: "modeler", message: "for the Q3 report" }
      }))
      assert.strictEqual(request.status, 201, request.text)
      assert.deepInclude(request.json as object, { userGroupId: "user:ada", permission: "modeler" })
      // A request is not a grant: ada still cannot read the package.
      assert.strictEqual((yield* Effect.promise(() => call(`${base(r)}/packages/shop/versions`, { token: ada }))).status, 404)
      const denied = yield* Effect.promise(() => call(`${base(r)}/packages/shop/permissions`, { method: "POST", token: ada, body: { userGroupId: "user:ada", permission: "admin" } }))
      assert.strictEqual(denied.status, 404)
      const listed = yield* Effect.promise(() => call(`${base(r)}/packages/shop/permissions`, { token: root }))
      assert.deepStrictEqual((listed.json as ReadonlyArray<{ userGroupId?: string }>).map((p) => p.userGroupId).sort(), ["group:eng", "user:root"])
    }).pipe(Effect.scoped), 120_000)
})

suite("pglite")
if (serverUrl !== undefined) suite("postgres")
