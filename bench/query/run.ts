/**
 * Query benchmark: median and p95 latency of execute_query over MCP (the example
 * server in its own process) for fixture views and two custom queries on data
 * generated at scale (the fixture generator's `--scale`, default 50: about 1M
 * order items and 2.5M flights), beside raw DuckDB running the same generated SQL
 * in this process, and the ratio, on a warm model.
 *
 *   npm run bench:query [-- --scale 50 --runs 20 --profile DIR]
 *
 * `--profile DIR` writes a V8 CPU profile of the server process into DIR (open it in
 * Chrome's DevTools or speedscope) to see where the time over raw DuckDB goes.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { freePort } from "../support.ts"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const scale = arg("scale", 50)
const profileAt = process.argv.indexOf("--profile")
const profileDir = profileAt > 0 ? resolve(process.argv[profileAt + 1] ?? ".") : undefined
const runs = arg("runs", 20)
const root = resolve(import.meta.dirname, "../..")
const generator = resolve(root, "../shared/fixtures/generate/generate.mjs")
const dataDir = join(root, "bench/.data", `scale${scale}`)

/** Generates the scaled packages once (the fixture generator, run beside a copy of the models). */
const generate = () => {
  if (existsSync(join(dataDir, "flights/data/flights.parquet"))) return
  if (!existsSync(generator)) throw new Error(`the fixture generator is not at ${generator}`)
  const sandbox = join(root, "bench/.data/gen")
  mkdirSync(join(sandbox, "generate"), { recursive: true })
  copyFileSync(generator, join(sandbox, "generate/generate.mjs"))
  if (!existsSync(join(sandbox, "generate/node_modules"))) symlinkSync(join(root, "node_modules"), join(sandbox, "generate/node_modules"))
  for (const name of ["ecommerce", "flights"]) {
    const from = join(root, "examples/server/demo/packages", name)
    mkdirSync(join(sandbox, "packages", name, "data"), { recursive: true })
    for (const f of readdirSync(from)) if (f === "publisher.json" || f.endsWith(".malloy")) copyFileSync(join(from, f), join(sandbox, "packages", name, f))
  }
  console.log(`generating scale ${scale} data into ${dataDir} ...`)
  execFileSync(process.execPath, [join(sandbox, "generate/generate.mjs"), "--scale", String(scale), "--out", dataDir], { stdio: "inherit" })
}

const startServer = (env: Record<string, string>) =>
  new Promise<ChildProcess>((done, fail) => {
    const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
    const p = spawn(process.execPath, [...profile, "--conditions=@modelgate/source", join(root, "examples/server/src/main.ts")], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"]
    })
    if (p.stdout === null) return fail(new Error("no stdout"))
    createInterface({ input: p.stdout }).on("line", (line) => {
      if (/^\s+token:/.test(line)) done(p)
    })
    p.once("exit", (code) => fail(new Error(`server exited with ${code}`)))
  })

const stats = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)] ?? 0, p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0 }
}

const cases: ReadonlyArray<{ readonly label: string; readonly pkg: "ecommerce" | "flights"; readonly args: Record<string, string> }> = [
  { label: "view order_items.by_category", pkg: "ecommerce", args: { source_name: "order_items", query_name: "by_category" } },
  { label: "view order_items.monthly_sales", pkg: "ecommerce", args: { source_name: "order_items", query_name: "monthly_sales" } },
  { label: "view flights.by_carrier", pkg: "flights", args: { source_name: "flights", query_name: "by_carrier" } },
  { label: "view flights.delays_by_month", pkg: "flights", args: { source_name: "flights", query_name: "delays_by_month" } },
  { label: "custom: sales by brand", pkg: "ecommerce", args: { query: "run: order_items -> { group_by: products.brand; aggregate: total_sales; order_by: total_sales desc; limit: 20 }" } },
  { label: "custom: busiest origin states", pkg: "flights", args: { query: "run: flights -> { group_by: origin.state; aggregate: flight_count, avg_departure_delay; order_by: flight_count desc; limit: 10 }" } }
]

const main = async () => {
  generate()
  const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-query-"))
  // The server's data directory is kept between runs: publishing the scaled files into embedded
  // storage is the slow part of a first run (minutes); later runs find the versions there.
  const serverData = join(root, "bench/.data", `server-scale${scale}`)
  const key = "mg_bench_query_key_0123456789abcdefghijklmnop"
  const seedPath = join(dir, "seed.json")
  writeFileSync(seedPath, JSON.stringify({
    users: [{ id: "root", email: "root@bench.test" }],
    apiKeys: [{ key, user: "root" }],
    organizations: [{
      name: "bench", grants: [{ userGroupId: "user:root", permission: "admin" }],
      environments: [{ name: "demo", packages: ["ecommerce", "flights"].map((name) => ({ name, versions: [{ id: "1.0.0", path: join(dataDir, name), latest: true }] })) }]
    }]
  }))
  const port = await freePort()
  const server = await startServer({ PORT: String(port), MODELGATE_DATA_DIR: serverData, MODELGATE_SEED: seedPath, MODELGATE_REQUEST_LOG: "false", MODELGATE_RATE_LIMIT: "1000000", DATABASE_URL: "" })
  const call = async (pkg: string, args: Record<string, string>) => {
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { authorization: `ApiKey ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_query", arguments: { project_name: "demo", package_name: pkg, model_uri: `${pkg}.malloy`, ...args } } })
    })
    const body = await response.json() as { result?: { isError?: boolean; structuredContent?: { metadata?: { sql?: string } } } }
    if (body.result?.isError === true || body.result?.structuredContent === undefined) throw new Error(`query failed: ${JSON.stringify(body).slice(0, 400)}`)
    return body.result.structuredContent.metadata?.sql ?? ""
  }
  const duck = await (await DuckDBInstance.create(":memory:")).connect()
  const rows: Array<string> = []
  for (const c of cases) {
    // Warm: the model is compiled and DuckDB has read the files' metadata.
    let sql = ""
    for (let i = 0; i < 3; i++) sql = await call(c.pkg, c.args)
    // The same SQL, with the package-relative paths made absolute, straight on DuckDB.
    const raw = sql.replace(/'data\//g, `'${join(dataDir, c.pkg)}/data/`)
    for (let i = 0; i < 3; i++) await duck.runAndReadAll(raw)
    // Alternating the two, so that load on the machine weighs on both alike.
    const mcp: Array<number> = []
    const direct: Array<number> = []
    for (let i = 0; i < runs; i++) {
      let start = performance.now()
      await call(c.pkg, c.args)
      mcp.push(performance.now() - start)
      start = performance.now()
      await duck.runAndReadAll(raw)
      direct.push(performance.now() - start)
    }
    const a = stats(mcp)
    const b = stats(direct)
    rows.push(`${c.label.padEnd(34)} ${a.median.toFixed(1).padStart(10)} ${a.p95.toFixed(1).padStart(9)} ${b.median.toFixed(1).padStart(12)} ${b.p95.toFixed(1).padStart(10)} ${(a.median / b.median).toFixed(2).padStart(7)}`)
  }
  console.log(`\nexecute_query over MCP vs raw DuckDB (scale ${scale}; ${runs} runs each, warm; ms)`)
  console.log(`${"query".padEnd(34)} ${"MCP median".padStart(10)} ${"MCP p95".padStart(9)} ${"DuckDB median".padStart(12)} ${"DuckDB p95".padStart(10)} ${"ratio".padStart(7)}`)
  for (const r of rows) console.log(r)
  // The server writes its CPU profile as it exits.
  await new Promise((done) => {
    server.once("exit", done)
    server.kill("SIGTERM")
  })
  if (profileDir !== undefined) console.log(`\nCPU profile of the server in ${profileDir}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
