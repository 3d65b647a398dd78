/**
 * Admin API benchmark: requests per second and p99 latency of PATCH version and
 * POST permission at concurrency 16 and 64, on the example server (PostgreSQL when
 * DATABASE_URL is set, else embedded PGlite), beside a bare node:http server that
 * runs the same SQL statements through the same driver, and the ratio.
 *
 *   DATABASE_URL=postgres://... npm run bench:admin [-- --seconds 5]
 */
import { DateTime, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { createServer } from "node:http"
import { createServer as netServer } from "node:net"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SecretCipher } from "@modelgate/core"
import { Pglite, Storage } from "@modelgate/sql"
import { TokenVerifier } from "@modelgate/http"
import * as Server from "@modelgate/example-server/Server"

const secondsArg = process.argv.indexOf("--seconds")
const seconds = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 5
const databaseUrl = process.env["DATABASE_URL"]

const freePort = () =>
  new Promise<number>((done) => {
    const s = netServer()
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      const port = typeof a === "object" && a !== null ? a.port : 0
      s.close(() => done(port))
    })
  })

/** Runs `concurrency` request loops (loop number `w`) for the duration; returns req/s and p99 (ms). */
const load = async (concurrency: number, request: (i: number, w: number) => Promise<Response>) => {
  const latencies: Array<number> = []
  let errors = 0
  let n = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    while (performance.now() < until) {
      const i = n++
      const start = performance.now()
      const response = await request(i, w)
      await response.arrayBuffer()
      latencies.push(performance.now() - start)
      if (response.status >= 300) errors++
    }
  }))
  latencies.sort((a, b) => a - b)
  return { rps: latencies.length / seconds, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0, errors }
}


const main = async () => {
  // A fresh database for the run.
  let url = databaseUrl
  let dropDb: (() => Promise<void>) | undefined
  if (databaseUrl !== undefined) {
    const name = `modelgate_bench_${Date.now().toString(36)}`
    const admin = (statement: string) =>
      Effect.runPromise(Effect.flatMap(SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 }))))
    await admin(`CREATE DATABASE ${name}`)
    const u = new URL(databaseUrl)
    u.pathname = `/${name}`
    url = u.toString()
    dropDb = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)
  }
  const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-"))
  // One small package, published as 64 versions: each load loop patches its own version, so the
  // figures measure throughput, not 64 writers fighting over one row.
  const tiny = join(dir, "tiny")
  mkdirSync(tiny)
  writeFileSync(join(tiny, "publisher.json"), JSON.stringify({ name: "shop" }))
  writeFileSync(join(tiny, "shop.malloy"), "source: numbers is duckdb.sql('select 1 as n')\n")
  const seedPath = join(dir, "seed.json")
  writeFileSync(seedPath, JSON.stringify({
    auth: { jwtSecret: "bench-secret-bench-secret-bench-secret", issuer: "bench", audience: "bench" },
    users: [{ id: "root", email: "root@bench.test" }],
    organizations: [{ name: "bench", grants: [{ userGroupId: "user:root", permission: "admin" }], environments: [{ name: "prod", packages: [{ name: "shop", versions: Array.from({ length: 64 }, (_, i) => ({ id: `1.0.${i}`, path: tiny })) }] }] }]
  }))
  const port = await freePort()
  const server = ManagedRuntime.make(Server.layer({
    port, host: "127.0.0.1", databaseUrl: url, dataDir: url === undefined ? join(dir, "data") : undefined, seedPath,
    secretKeys: `*bench=${btoa(String.fromCharCode(...new Uint8Array(32).fill(3)))}`, rateLimit: 100_000_000, requestLog: false
  }))
  await server.runPromise(Effect.void)
  const token = await TokenVerifier.signHs256(Redacted.make("bench-secret-bench-secret-bench-secret"), { sub: "root" }, { issuer: "bench", audience: "bench" })
  const base = `http://127.0.0.1:${port}/api/v0/organizations/bench/environments/prod/packages/shop`
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }

  // The bare server: the same statements through the same driver, no framework, no auth, no rules.
  const client = url === undefined ? Pglite.layer({ dataDir: join(dir, "bare") }) : Storage.layerPostgres({ url: Redacted.make(url), maxConnections: 10 })
  const bare = ManagedRuntime.make(client)
  const barePort = await freePort()
  const sqlStatements = {
    patchVersion: (id: string) => Effect.gen(function*() {
      const sql = yield* SqlClient
      const rows = yield* sql<{ record: unknown; revision: number }>`
        SELECT record, revision FROM package_versions WHERE organization = 'bench' AND environment = 'prod' AND package = 'shop' AND id = ${id}`
      const row = rows[0]
      if (row === undefined) return 404
      yield* sql`
        UPDATE package_versions SET record = ${JSON.stringify(row.record)}::jsonb, promote_when_ready = false, revision = revision + 1
        WHERE organization = 'bench' AND environment = 'prod' AND package = 'shop' AND id = ${id} AND revision = ${row.revision}
        RETURNING record, revision`
      return 200
    }),
    postPermission: (i: number) => Effect.gen(function*() {
      const sql = yield* SqlClient
      const now = DateTime.formatIso(yield* DateTime.now)
      yield* sql`SELECT * FROM grants WHERE organization = 'bench' ORDER BY scope_key, grantee`
      yield* sql`
        INSERT INTO grants (organization, scope_key, scope, grantee, principal, workspace, role, message, created_at, updated_at)
        VALUES ('bench', 'bench/prod/shop', '{"_tag":"Package","organization":"bench","environment":"prod","package":"shop"}'::jsonb,
          ${`user:b${i}@bench.test`}, ${`user:b${i}@bench.test`}, ${null}, 'viewer', ${null}, ${now}::timestamptz, ${now}::timestamptz)
        ON CONFLICT (scope_key, grantee) DO UPDATE SET role = EXCLUDED.role, updated_at = EXCLUDED.updated_at
        RETURNING *, (xmax = 0) AS inserted`
      return 201
    })
  }
  if (url === undefined) {
    // The bare PGlite store needs the schema too.
    await Effect.runPromise(Effect.scoped(Layer.build(Storage.layer.pipe(Layer.provide(SecretCipher.SecretCipher.layerMemory), Layer.provide(client)))))
  }
  let bareCounter = 0
  const bareServer = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const effect = req.method === "PATCH" ? sqlStatements.patchVersion(decodeURIComponent((req.url ?? "/").slice(1))) : sqlStatements.postPermission(bareCounter++)
      bare.runPromise(effect).then((status) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end("{}")
      }, () => {
        res.writeHead(500)
        res.end()
      })
    })
  })
  await new Promise<void>((done) => bareServer.listen(barePort, "127.0.0.1", () => done()))
  const bareBase = `http://127.0.0.1:${barePort}`

  const rows: Array<string> = []
  for (const concurrency of [16, 64]) {
    const api = await load(concurrency, (i, w) =>
      fetch(`${base}/versions/1.0.${w}`, { method: "PATCH", headers, body: JSON.stringify({ archiveStatus: i % 2 === 0 ? "archive" : "unarchive" }) }))
    const raw = await load(concurrency, (_, w) => fetch(`${bareBase}/1.0.${w}`, { method: "PATCH", body: "{}" }))
    rows.push(row("PATCH version", concurrency, api, raw))
    const apiP = await load(concurrency, (i) =>
      fetch(`${base}/permissions`, { method: "POST", headers, body: JSON.stringify({ userGroupId: `user:p${concurrency}_${i}@bench.test`, permission: "viewer" }) }))
    const rawP = await load(concurrency, () => fetch(`${bareBase}/permission`, { method: "POST", body: "{}" }))
    rows.push(row("POST permission", concurrency, apiP, rawP))
  }
  console.log(`\nAdmin API on ${url === undefined ? "embedded PGlite" : "PostgreSQL"} (${seconds} s per cell, load generated in the same process)`)
  console.log("operation          conc   API req/s   API p99 ms   bare req/s   bare p99 ms   ratio   API errors")
  for (const r of rows) console.log(r)
  bareServer.close()
  await bare.dispose()
  await server.dispose()
  await dropDb?.()
}

const row = (name: string, concurrency: number, api: { rps: number; p99: number; errors: number }, raw: { rps: number; p99: number }) =>
  `${name.padEnd(18)} ${String(concurrency).padStart(4)} ${api.rps.toFixed(0).padStart(11)} ${api.p99.toFixed(1).padStart(12)} ${raw.rps.toFixed(0).padStart(12)} ${raw.p99.toFixed(1).padStart(13)} ${(api.rps / raw.rps).toFixed(2).padStart(7)} ${String(api.errors).padStart(12)}`

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
