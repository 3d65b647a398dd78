import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as jose from "jose"
import { generateKeyPairSync } from "node:crypto"
import { resolve } from "node:path"
import { call, type Running, serverUrl, start } from "./TestServer.ts"

// --- the seed: one organization, and a user for every role at every level, direct and through a group ---------

const roles = ["admin", "modeler", "viewer"] as const
const levels = ["organization", "environment", "package"] as const
const vias = ["direct", "group"] as const
type Role = typeof roles[number] | "none"
type Level = typeof levels[number]
type Via = typeof vias[number]

const userOf = (role: Role, level: Level, via: Via) => `u_${role}_${level}_${via}`
const groupOf = (role: Role, level: Level) => `g_${role}_${level}`
const principal = (role: Exclude<Role, "none">, level: Level, via: Via) =>
  via === "direct" ? `user:${userOf(role, level, via)}` : `group:${groupOf(role, level)}`

const grantsAt = (level: Level) =>
  roles.flatMap((role) => vias.map((via) => ({ userGroupId: principal(role, level, via), permission: role })))

const demoPackages = resolve(import.meta.dirname, "../demo/packages")

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [
    ...roles.flatMap((role) => levels.flatMap((level) => vias.map((via) => ({ id: userOf(role, level, via), email: `${userOf(role, level, via)}@acme.test` })))),
    { id: "nobody", email: "nobody@acme.test" },
    { id: "root", email: "root@acme.test" }
  ],
  groups: roles.flatMap((role) => levels.map((level) => ({ name: groupOf(role, level), members: [userOf(role, level, "group")] }))),
  organizations: [{
    name: "acme",
    grants: [...grantsAt("organization"), { userGroupId: "user:root", permission: "admin" }],
    environments: [
      {
        name: "prod",
        grants: grantsAt("environment"),
        connections: [{ name: "warehouse", type: "duckdb" }],
        packages: [{ name: "shop", grants: grantsAt("package"), versions: [{ id: "1.0.0", path: `${demoPackages}/ecommerce`, latest: true }] }]
      },
      { name: "dev", connections: [], packages: [] }
    ]
  }]
}

const base = (r: Running) => `${r.url}/api/v0/organizations/acme/environments/prod`

// --- expected statuses, written from the spec's rules and docs/decisions.md ------------------------------------

const reachesEnvironment = (level: Level) => level === "organization" || level === "environment"
/** No role where the resource lives: 404; a role too weak: 403; else the success status. */
const expected = (operation: string, role: Role, level: Level): number => {
  const hasPackageRole = role !== "none"
  const hasEnvironmentRole = role !== "none" && reachesEnvironment(level)
  switch (operation) {
    case "PATCH connection":
      return !hasEnvironmentRole ? 404 : role === "admin" ? 200 : 403
    case "GET connection":
      return hasEnvironmentRole ? 200 : 404
    case "PATCH version":
    case "POST permission":
      return !hasPackageRole ? 404 : role === "viewer" ? 403 : operation === "POST permission" ? 201 : 200
    case "POST permission request":
      return 201
    case "GET version":
    case "GET permissions":
      return hasPackageRole ? 200 : 404
  }
  throw new Error(operation)
}

const operations: ReadonlyArray<readonly [string, (r: Running, token: string) => Promise<number>]> = [
  ["PATCH connection", async (r, token) => (await call(`${base(r)}/connections/warehouse`, { method: "PATCH", token, body: { type: "duckdb" } })).status],
  ["GET connection", async (r, token) => (await call(`${base(r)}/connections/warehouse`, { token })).status],
  ["PATCH version", async (r, token) => (await call(`${base(r)}/packages/shop/versions/1.0.0`, { method: "PATCH", token, body: { archiveStatus: "unarchive" } })).status],
  ["GET version", async (r, token) => (await call(`${base(r)}/packages/shop/versions/1.0.0`, { token })).status],
  ["POST permission", async (r, token) => (await call(`${base(r)}/packages/shop/permissions`, { method: "POST", token, body: { userGroupId: "user:someone@acme.test", permission: "viewer" } })).status],
  ["POST permission request", async (r, token) => (await call(`${base(r)}/packages/shop/permissions?requestPermission=true`, { method: "POST", token, body: { message: "please" } })).status],
  ["GET permissions", async (r, token) => (await call(`${base(r)}/packages/shop/permissions`, { token })).status]
]

const e2e = (backend: "pglite" | "postgres") =>
  describe(`admin API end to end (${backend})`, () => {
    it.live("authorization matrix: every role at every level, direct and through a group, for every operation", () =>
      Effect.gen(function*() {
        const r = yield* start(seed, { backend })
        const cases = [
          ...roles.flatMap((role) => levels.flatMap((level) => vias.map((via) => ({ role: role as Role, level, via, user: userOf(role, level, via) })))),
          { role: "none" as Role, level: "package" as Level, via: "direct" as Via, user: "nobody" }
        ]
        const failures: Array<string> = []
        for (const c of cases) {
          const token = yield* Effect.promise(() => r.token(c.user))
          for (const [operation, run] of operations) {
            const status = yield* Effect.promise(() => run(r, token))
            const want = expected(operation, c.role, c.level)
            if (status !== want) failures.push(`${operation} as ${c.role} at ${c.level} (${c.via}): got ${status}, expected ${want}`)
          }
        }
        assert.deepStrictEqual(failures, [])
        assert.strictEqual(cases.length * operations.length, 133)
      }).pipe(Effect.scoped), 240_000)

    it.live("connections: secrets set through the API never come back, and a failed test saves nothing", () =>
      Effect.gen(function*() {
        const r = yield* start(seed, { backend })
        const token = yield* Effect.promise(() => r.token("root"))
        const marker = "MARKER-e2e-5f3a"
        const created = yield* Effect.promise(() => call(`${base(r)}/connections`, {
          method: "POST", token,
          body: {
            name: "pg", type: "postgres",
            postgresConnection: { connectionString: `postgres://postgres:${marker}-cs@127.0.0.1:5432/postgres` }
          }
        }))
        assert.strictEqual(created.status, 201, created.text)
        const withAttached = yield* Effect.promise(() => call(`${base(r)}/connections`, {
          method: "POST", token,
          body: {
            name: "lake", type: "duckdb",
            duckdbConnection: { attachedDatabases: [{ name: "pgdb", type: "postgres", postgresConnection: { host: "127.0.0.1", port: 5432, databaseName: "postgres", userName: "postgres", password: `${marker}-pw` } }] }
          }
        }))
        assert.strictEqual(withAttached.status, 201, withAttached.text)
        // Update keeping the stored secret (blank), then a failing update with a new marker.
        const kept = yield* Effect.promise(() => call(`${base(r)}/connections/lake`, {
          method: "PATCH", token,
          body: { type: "duckdb", duckdbConnection: { attachedDatabases: [{ name: "pgdb", type: "postgres", postgresConnection: { host: "127.0.0.1", port: 5432, databaseName: "postgres", userName: "postgres", password: "" } }] } }
        }))
        assert.strictEqual(kept.status, 200, kept.text)
        const refused = yield* Effect.promise(() => call(`${base(r)}/connections/pg`, {
          method: "PATCH", token,
          body: { type: "postgres", postgresConnection: { host: "127.0.0.1", port: 1, databaseName: "postgres", userName: "postgres", password: `${marker}-new` } }
        }))
        assert.strictEqual(refused.status, 400)
        assert.deepInclude(refused.json as object, { code: "VALIDATION_ERROR" })
        assert.match(refused.text, /Connection test failed at connect/)
        const after = yield* Effect.promise(() => call(`${base(r)}/connections/pg`, { token }))
        assert.isDefined((after.json as { postgresConnection?: unknown }).postgresConnection)
        assert.notProperty((after.json as { postgresConnection: object }).postgresConnection, "host")
        const list = yield* Effect.promise(() => call(`${base(r)}/connections`, { token }))
        for (const text of [created.text, withAttached.text, kept.text, refused.text, after.text, list.text, r.logs.join("\n")]) {
          assert.notInclude(text, marker)
        }
      }).pipe(Effect.scoped), 120_000)

    it.live("errors: malformed JSON, unknown fields, bad paths and wrong content type are VALIDATION_ERROR naming what is wrong", () =>
      Effect.gen(function*() {
        const r = yield* start(seed, { backend })
        const token = yield* Effect.promise(() => r.token("root"))
        const cases = yield* Effect.promise(() => Promise.all([
          call(`${base(r)}/packages/shop/versions/1.0.0`, { method: "PATCH", token, raw: "{not json" }),
          call(`${base(r)}/packages/shop/versions/1.0.0`, { method: "PATCH", token, body: { archiveStatus: "archive", colour: "red" } }),
          call(`${base(r)}/packages/shop/versions/1.0.0`, { method: "PATCH", token, body: { archiveStatus: "error_state" } }),
          call(`${r.url}/api/v0/organizations/ac%2Fme/environments/prod/connections`, { token }),
          call(`${base(r)}/connections/warehouse`, { method: "PATCH", token, raw: "type=duckdb", contentType: "text/plain" }),
          call(`${base(r)}/connections/warehouse`, { method: "PATCH", token, body: { type: "duckdb", excludeAllTables: "yes" } })
        ]))
        for (const c of cases) {
          assert.strictEqual(c.status, 400, c.text)
          assert.strictEqual((c.json as { code?: string }).code, "VALIDATION_ERROR", c.text)
        }
        assert.match(cases[1]?.text ?? "", /colour/)
        assert.match(cases[5]?.text ?? "", /excludeAllTables/)
        const missing = yield* Effect.promise(() => call(`${base(r)}/connections/nope`, { token }))
        assert.deepStrictEqual(missing.json, { code: "RESOURCE_NOT_FOUND", message: "Connection nope not found in acme/prod" })
      }).pipe(Effect.scoped), 120_000)

    it.live("JWT attack set: every forged, stale or broken token is 401 AUTHENTICATION_REQUIRED", () =>
      Effect.gen(function*() {
        const r = yield* start(seed, { backend })
        const secret = new TextEncoder().encode(Redacted.value(r.jwtSecret))
        const now = Math.floor(Date.now() / 1000)
        const sign = (claims: jose.JWTPayload, header: jose.JWTHeaderParameters = { alg: "HS256" }) =>
          new jose.SignJWT(claims).setProtectedHeader(header).sign(secret)
        const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
        const good = { sub: "root", iss: "modelgate-e2e", aud: "modelgate", iat: now, exp: now + 600 }
        const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url")
        const tokens: Record<string, string> = {
          "alg none": `${b64({ alg: "none", typ: "JWT" })}.${b64(good)}.`,
          "RS256 token": yield* Effect.promise(() => new jose.SignJWT(good).setProtectedHeader({ alg: "RS256" }).sign(privateKey)),
          "HS256 signed with the public key": yield* Effect.promise(() =>
            new jose.SignJWT(good).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(publicKey.export({ type: "spki", format: "pem" }).toString()))),
          "bad signature": (yield* Effect.promise(() => sign(good))).slice(0, -4) + "AAAA",
          "expired": yield* Effect.promise(() => sign({ ...good, exp: now - 3600 })),
          "not yet valid": yield* Effect.promise(() => sign({ ...good, nbf: now + 3600 })),
          "wrong issuer": yield* Effect.promise(() => sign({ ...good, iss: "someone-else" })),
          "wrong audience": yield* Effect.promise(() => sign({ ...good, aud: "another-api" })),
          "missing sub": yield* Effect.promise(() => sign({ iss: good.iss, aud: good.aud, exp: good.exp })),
          "garbage": "not.a.jwt",
          "empty": ""
        }
        const valid = yield* Effect.promise(() => sign(good))
        const ok = yield* Effect.promise(() => call(`${base(r)}/connections`, { token: valid }))
        assert.strictEqual(ok.status, 200, ok.text)
        for (const [name, token] of Object.entries(tokens)) {
          const response = yield* Effect.promise(() => call(`${base(r)}/connections`, { token }))
          assert.strictEqual(response.status, 401, `${name}: ${response.text}`)
          assert.strictEqual((response.json as { code?: string }).code, "AUTHENTICATION_REQUIRED", name)
        }
        const none = yield* Effect.promise(() => fetch(`${base(r)}/connections`))
        assert.strictEqual(none.status, 401)
      }).pipe(Effect.scoped), 120_000)
  })

e2e("pglite")
if (serverUrl !== undefined) e2e("postgres")
