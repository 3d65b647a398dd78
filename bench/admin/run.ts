/**
 * Admin API benchmark: requests per second and p99 latency of PATCH version and
 * POST permission at concurrency 16 and 64, on the example server with
 * PostgreSQL, beside a bare node:http server running the same SQL statements
 * through the same driver (`bare.ts`), and the ratio. Both servers run in their
 * own processes; this process only generates load.
 *
 *   DATABASE_URL=postgres://... npm run bench:admin [-- --seconds 5]
 */
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { freePort } from "../support.ts"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"

const secondsArg = process.argv.indexOf("--seconds")
const seconds = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 5
const databaseUrl = process.env["DATABASE_URL"]
const root = resolve(import.meta.dirname, "../..")

/** Runs `concurrency` request loops (loop number `w`) for the duration; returns req/s, p99 (ms) and non-2xx count. */
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

/** Starts a child node process and resolves once a stdout line matches. */
const child = (args: ReadonlyArray<string>, env: Record<string, string>, ready: RegExp) =>
  new Promise<{ process: ChildProcess; line: string }>((done, fail) => {
    const p = spawn(process.execPath, ["--conditions=@modelgate/source", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] })
    if (p.stdout === null) return fail(new Error("no stdout"))
    createInterface({ input: p.stdout }).on("line", (line) => {
      if (ready.test(line)) done({ process: p, line })
    })
    p.on("exit", (code) => fail(new Error(`${args[0]} exited with ${code}`)))
  })

const admin = (url: string, statement: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))))

const main = async () => {
  if (databaseUrl === undefined) {
    console.log("bench:admin needs DATABASE_URL (a PostgreSQL server); skipped")
    return
  }
  const name = `modelgate_bench_${Date.now().toString(36)}`
  await admin(databaseUrl, `CREATE DATABASE ${name}`)
  const u = new URL(databaseUrl)
  u.pathname = `/${name}`
  const url = u.toString()
  const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-"))
  // One small package published as 64 versions: each load loop patches its own version, so the
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
  const apiPort = await freePort()
  const api = await child([join(root, "examples/server/src/main.ts")], {
    PORT: String(apiPort), DATABASE_URL: url, MODELGATE_SEED: seedPath, MODELGATE_REQUEST_LOG: "false", MODELGATE_RATE_LIMIT: "100000000",
    MODELGATE_SECRET_KEYS: `*bench=${btoa(String.fromCharCode(...new Uint8Array(32).fill(3)))}`
  }, /^\s+token:/)
  const token = api.line.trim().split(/\s+/)[1] ?? ""
  const barePort = await freePort()
  const bare = await child([join(root, "bench/admin/bare.ts"), String(barePort), url], {}, /^ready$/)
  const base = `http://127.0.0.1:${apiPort}/api/v0/organizations/bench/environments/prod/packages/shop`
  const bareBase = `http://127.0.0.1:${barePort}`
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }

  const rows: Array<string> = []
  for (const concurrency of [16, 64]) {
    const patchApi = await load(concurrency, (i, w) =>
      fetch(`${base}/versions/1.0.${w}`, { method: "PATCH", headers, body: JSON.stringify({ archiveStatus: i % 2 === 0 ? "archive" : "unarchive" }) }))
    const patchBare = await load(concurrency, (_, w) => fetch(`${bareBase}/1.0.${w}`, { method: "PATCH", body: "{}" }))
    rows.push(row("PATCH version", concurrency, patchApi, patchBare))
    const postApi = await load(concurrency, (i) =>
      fetch(`${base}/permissions`, { method: "POST", headers, body: JSON.stringify({ userGroupId: `user:p${concurrency}_${i}@bench.test`, permission: "viewer" }) }))
    const postBare = await load(concurrency, () => fetch(`${bareBase}/permission`, { method: "POST", body: "{}" }))
    rows.push(row("POST permission", concurrency, postApi, postBare))
  }
  console.log(`\nAdmin API on PostgreSQL (${seconds} s per cell; servers in their own processes)`)
  console.log("operation          conc   API req/s   API p99 ms   bare req/s   bare p99 ms   ratio   API non-2xx")
  for (const r of rows) console.log(r)
  api.process.kill("SIGTERM")
  bare.process.kill("SIGTERM")
  await new Promise((done) => setTimeout(done, 1000))
  await admin(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

const row = (name: string, concurrency: number, api: { rps: number; p99: number; errors: number }, raw: { rps: number; p99: number }) =>
  `${name.padEnd(18)} ${String(concurrency).padStart(4)} ${api.rps.toFixed(0).padStart(11)} ${api.p99.toFixed(1).padStart(12)} ${raw.rps.toFixed(0).padStart(12)} ${raw.p99.toFixed(1).padStart(13)} ${(api.rps / raw.rps).toFixed(2).padStart(7)} ${String(api.errors).padStart(13)}`

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
