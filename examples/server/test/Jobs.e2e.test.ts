/**
 * The background jobs end to end through the example server, on PGlite and on the
 * PostgreSQL server: a published version builds (BUILDING with indexing progress,
 * then READY) and get_context finds its entities; a package that does not compile
 * ends in error_state and is not served; an auto-promote version becomes latest
 * once READY; a postgres connection is indexed, and an update mid-run re-indexes it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { resolve } from "node:path"
import { PackageFiles } from "@modelgate/http"
import { ScratchDatabase } from "@modelgate/sql"
import { call, type Running, serverUrl, start } from "./TestServer.ts"

const demoPackages = resolve(import.meta.dirname, "../demo/packages")
const apiKey = "mg_e2e_jobs_admin_key_000000000000000000000"

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [{ id: "root", email: "root@acme.test" }],
  apiKeys: [{ key: apiKey, user: "root" }],
  organizations: [{
    name: "acme",
    grants: [{ userGroupId: "user:root", permission: "admin" }],
    environments: [{
      name: "prod",
      connections: [{ name: "duckdb", type: "duckdb" }],
      packages: [{ name: "ecommerce" }, { name: "auto", autoPromote: true }]
    }]
  }]
}

// Each test publishes a version id of its own (the runtime's folder cache is keyed by a location
// unique per publish, so this is for readability of the failures, not for correctness).
const freshId = () => `1.0.${Date.now() % 1_000_000_000}`

const base = (r: Running) => `${r.url}/api/v0/organizations/acme/environments/prod`

interface Version {
  readonly id: string
  readonly archiveStatus: string
  readonly buildStatus: string
  readonly promoteWhenReady: boolean
  readonly promotedAt: string | null
  readonly indexingProgress: { readonly packageProgress: Record<string, number> } | null
  readonly metadata?: { readonly displayErrorMessage?: string; readonly rawErrorMessage?: string }
}

interface ConnectionRead {
  readonly indexingStatus: string | null
  readonly indexingStatusLastUpdated: string | null
  readonly indexingProgress: {
    readonly schemaProgress?: Record<string, number | null>
    readonly modelSuggestionsProgress?: Record<string, number | null>
  } | null
}

/** Reads `url` every few milliseconds until `done` holds; returns every distinct body seen, in order. */
const watch = <A>(url: string, token: string, done: (a: A) => boolean, timeoutMillis = 90_000) =>
  Effect.promise(async () => {
    const seen: Array<A> = []
    const deadline = Date.now() + timeoutMillis
    for (;;) {
      const response = await call(url, { token })
      if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${response.text}`)
      const body = response.json as A
      const last = seen[seen.length - 1]
      if (last === undefined || JSON.stringify(last) !== response.text) seen.push(body)
      if (done(body)) return seen
      if (Date.now() > deadline) throw new Error(`timed out; last: ${response.text}`)
      await new Promise((r) => setTimeout(r, 5))
    }
  })

const publish = (r: Running, token: string, pkg: string, id: string, files: ReadonlyMap<string, Uint8Array>) =>
  Effect.promise(() =>
    call(`${base(r)}/packages/${pkg}/versions?id=${id}`, { method: "POST", token, raw: PackageFiles.toTarGz(files), contentType: "application/gzip" })
  )

interface ToolResult {
  readonly isError?: boolean | undefined
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown> | undefined
}

const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? "").join("\n")

/** Calls MCP tools as the seed's admin (API key) for the duration of `f`. */
const withMcp = <A>(r: Running, f: (tool: (name: string, args: Record<string, unknown>) => Promise<ToolResult>) => Promise<A>) =>
  Effect.promise(async () => {
    const client = new Client({ name: "jobs-e2e", version: "0.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${r.url}/mcp`), { requestInit: { headers: { Authorization: `ApiKey ${apiKey}` } } }))
    try {
      return await f(async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult)
    } finally {
      await client.close()
    }
  })

const text = (s: string) => new TextEncoder().encode(s)

/** The PostgreSQL server holding the data a postgres connection reads (always the local server). */
const dataServer = serverUrl ?? "postgres://postgres@127.0.0.1:5432/postgres"

/**
 * A scratch database (dropped when the scope closes): schema `sales` with two related tables, and
 * `extra` small tables in `public`, so that indexing everything takes a while.
 */
const dataDatabase = (extra: number) =>
  Effect.gen(function*() {
    const db = yield* ScratchDatabase.make(dataServer, "modelgate_e2e_data")
    yield* Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql.unsafe(`CREATE SCHEMA sales`)
      yield* sql.unsafe(`CREATE TABLE sales.customers (id int PRIMARY KEY, name text, region text)`)
      yield* sql.unsafe(`CREATE TABLE sales.orders (id int PRIMARY KEY, customer_id int REFERENCES sales.customers(id), amount numeric, placed_at timestamptz)`)
      for (let i = 0; i < extra; i++) yield* sql.unsafe(`CREATE TABLE public.extra_${i} (id int PRIMARY KEY, label text, value double precision)`)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 })), Effect.orDie)
    return db
  })

const suite = (backend: "pglite" | "postgres") => describe(`background jobs end to end (${backend})`, () => {
  it.live("publish builds the version: BUILDING with indexing progress, then READY and, armed, latest; get_context finds its entities", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend })
      const token = yield* Effect.promise(() => r.token("root"))
      const demo = yield* PackageFiles.fromDirectory(`${demoPackages}/ecommerce`)
      // Four copies of the demo model, so indexing runs long enough to be watched.
      const model = demo.get("ecommerce.malloy") ?? new Uint8Array()
      const files = new Map(demo)
      for (let i = 1; i < 4; i++) files.set(`copy_${i}.malloy`, model)
      const id = freshId()
      const published = yield* publish(r, token, "auto", id, files)
      assert.strictEqual(published.status, 201, published.text)
      assert.deepInclude(published.json as object, { id, buildStatus: "BUILDING", promoteWhenReady: true, promotedAt: null })
      const seen = yield* watch<Version>(`${base(r)}/packages/auto/versions/${id}`, token, (v) => v.buildStatus !== "BUILDING")
      const last = seen[seen.length - 1]
      assert.strictEqual(last?.buildStatus, "READY", JSON.stringify(last))
      assert.isNull(last?.indexingProgress)
      // While it built, the version showed its indexing progress over the 24 sources.
      const progress = seen.filter((v) => v.buildStatus === "BUILDING" && v.indexingProgress !== null).map((v) => v.indexingProgress?.packageProgress)
      assert.isAbove(progress.length, 0, JSON.stringify(seen))
      for (const p of progress) {
        assert.strictEqual(p?.["sourcesTotal"], 24)
        assert.isAtMost(p?.["sourcesCompleted"] ?? 99, 24)
      }

      // Armed at publish, it becomes the latest once READY (the reconciler runs right after), and is disarmed.
      yield* watch<{ readonly latestVersionId: string | null }>(`${base(r)}/packages/auto`, token, (p) => p.latestVersionId === id, 30_000)
      const promoted = (yield* Effect.promise(() => call(`${base(r)}/packages/auto/versions/${id}`, { token }))).json as Version
      assert.isFalse(promoted.promoteWhenReady)
      assert.isString(promoted.promotedAt)

      // The index was built at publish: get_context finds the package's entities.
      const context = yield* withMcp(r, (tool) => tool("get_context", { natural_language_query: "How many orders per sales channel?", project_name: "prod" }))
      assert.notStrictEqual(context.isError, true, textOf(context))
      const sources = context.structuredContent?.["sources"] as ReadonlyArray<Record<string, unknown>>
      assert.strictEqual(sources[0]?.["package_name"], "auto", JSON.stringify(context.structuredContent))
      const phrases = sources[0]?.["phrases"] as ReadonlyArray<{ readonly entities: ReadonlyArray<{ readonly name: string }> }>
      assert.isTrue(phrases.some((p) => p.entities.some((e) => /(^|\.)(channel|order_count)$/.test(e.name))), JSON.stringify(phrases))
    }).pipe(Effect.scoped), 120_000)

  it.live("a package whose model does not compile ends in error_state with its message, FAILED, and is not served", () =>
    Effect.gen(function*() {
      const r = yield* start(seed, { backend })
      const token = yield* Effect.promise(() => r.token("root"))
      const files = new Map([
        ["publisher.json", text(JSON.stringify({ name: "ecommerce" }))],
        ["broken.malloy", text("source: broken is duckdb.table('nope.parquet') extend {\n  dimension: x is\n}\n")]
      ])
      const id = freshId()
      const published = yield* publish(r, token, "ecommerce", id, files)
      assert.strictEqual(published.status, 201, published.text)
      const seen = yield* watch<Version>(`${base(r)}/packages/ecommerce/versions/${id}`, token, (v) => v.buildStatus !== "BUILDING")
      const last = seen[seen.length - 1]
      assert.strictEqual(last?.buildStatus, "FAILED", JSON.stringify(last))
      assert.strictEqual(last?.archiveStatus, "error_state")
      assert.match(last?.metadata?.displayErrorMessage ?? "", /^The package failed to compile: /)
      assert.isAbove((last?.metadata?.rawErrorMessage ?? "").length, 0)
      // Never served: neither pinned by version nor as a latest (it never became one).
      const refused = yield* withMcp(r, (tool) =>
        tool("execute_query", { project_name: "prod", package_name: "ecommerce", model_uri: "broken.malloy", query: "run: broken -> { group_by: x }", version_id: id }))
      assert.strictEqual(refused.isError, true)
      assert.match(textOf(refused), /error_state/)
      const pkg = yield* Effect.promise(() => call(`${base(r)}/packages/ecommerce`, { token }))
      assert.isNull((pkg.json as { latestVersionId: string | null }).latestVersionId)
    }).pipe(Effect.scoped), 120_000)

  it.live("a postgres connection is indexed (progress with counts, then INDEXED); an update mid-run re-indexes it (RETRY)", () =>
    Effect.gen(function*() {
      const extra = 150
      const db = yield* dataDatabase(extra)
      const r = yield* start(seed, { backend })
      const token = yield* Effect.promise(() => r.token("root"))
      const url = `${base(r)}/connections/pg`
      const postgresConnection = { host: "127.0.0.1", port: 5432, databaseName: db.name, userName: "postgres" }
      const created = yield* Effect.promise(() => call(`${base(r)}/connections`, { method: "POST", token, body: { name: "pg", type: "postgres", postgresConnection } }))
      assert.strictEqual(created.status, 201, created.text)

      // Schema indexing of all 152 tables is under way: the connection is updated to the two sales tables.
      const before = yield* watch<ConnectionRead>(url, token, (c) =>
        c.indexingStatus !== "UNKNOWN" && c.indexingStatus !== "SCHEMA_INDEXING" ||
        (c.indexingProgress?.schemaProgress?.["tablesCompleted"] ?? 0) >= 1)
      const running = before[before.length - 1]
      assert.strictEqual(running?.indexingStatus, "SCHEMA_INDEXING", JSON.stringify(before))
      assert.strictEqual(running?.indexingProgress?.schemaProgress?.["tablesTotal"], extra + 2)
      const updated = yield* Effect.promise(() =>
        call(url, { method: "PATCH", token, body: { type: "postgres", postgresConnection, includeTables: ["sales.*"] } }))
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual((updated.json as ConnectionRead).indexingStatus, "RETRY", updated.text)

      const after = yield* watch<ConnectionRead>(url, token, (c) => c.indexingStatus === "INDEXED" || c.indexingStatus === "FAILED")
      const statuses = after.map((c) => c.indexingStatus)
      assert.strictEqual(statuses[statuses.length - 1], "INDEXED", JSON.stringify(after))
      assert.isNull(after[after.length - 1]?.indexingProgress)
      // The re-index ran after the update (INDEXED was reached after RETRY was set), on the new
      // settings: model suggestions, which follow the schema step, count the two sales tables. (Two
      // tables index in a few milliseconds, so a poll may see no snapshot of them at all.)
      const retriedAt = Date.parse((updated.json as ConnectionRead).indexingStatusLastUpdated ?? "")
      const indexedAt = Date.parse(after[after.length - 1]?.indexingStatusLastUpdated ?? "")
      assert.isAbove(indexedAt, retriedAt, JSON.stringify(after))
      for (const c of after) {
        const total = c.indexingStatus === "MODEL_SUGGESTION_INDEXING" ? c.indexingProgress?.modelSuggestionsProgress?.["tablesTotal"] : undefined
        if (total !== undefined && total !== null) assert.strictEqual(total, 2, JSON.stringify(c))
      }
    }).pipe(Effect.scoped), 120_000)
})

suite("pglite")
if (serverUrl !== undefined) suite("postgres")
