/**
 * Start-up benchmark: how long the example server takes, from process spawn, until `GET /health`
 * answers 200 (liveness), `GET /ready` answers 200 (storage, migrations, seed) and the URLs, token
 * and API key are printed; on a fresh data directory and on a reused one. Polls every 20 ms.
 *
 *   npm run bench:start [-- --runs 3] [-- --main path/to/main.ts]
 *
 * Node's compile cache (which the server enables) makes every start after the first faster; set
 * NODE_DISABLE_COMPILE_CACHE=1 to measure cold module loading.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { freePort } from "../support.ts"

const runsArg = process.argv.indexOf("--runs")
const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3
const mainArg = process.argv.indexOf("--main")
// Another entry point (an older version of the server, say) to compare with.
const main = mainArg > 0 ? resolve(process.argv[mainArg + 1] ?? "") : resolve(import.meta.dirname, "../../examples/server/src/main.ts")

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

const status = async (url: string) => {
  try {
    // A request the server accepted before it installed its handler may never be answered.
    const response = await fetch(url, { signal: AbortSignal.timeout(500) })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

interface Run {
  readonly health: number
  readonly ready: number
  readonly printed: number
}

/** One start: milliseconds from spawn to /health 200, /ready 200 and the API key line; then SIGTERM. */
const once = async (dataDir: string): Promise<Run> => {
  const port = await freePort()
  const t0 = performance.now()
  const child = spawn(process.execPath, ["--conditions=@modelgate/source", main], {
    env: { ...process.env, PORT: String(port), MODELGATE_DATA_DIR: dataDir, DATABASE_URL: "", MODELGATE_LOG_LEVEL: "Warn", MODELGATE_LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise<void>((done) => child.on("exit", () => done()))
  let printed = Number.NaN
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (process.env["BENCH_DEBUG"] !== undefined) process.stderr.write(`${line}\n`)
    if (/^\s+API key:/.test(line)) printed = performance.now() - t0
  })
  let health = Number.NaN
  let ready = Number.NaN
  const deadline = t0 + 120_000
  while (performance.now() < deadline && (Number.isNaN(health) || Number.isNaN(ready) || Number.isNaN(printed))) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    if (Number.isNaN(health)) {
      const code = await status(`http://127.0.0.1:${port}/health`)
      if (process.env["BENCH_DEBUG"] !== undefined) process.stderr.write(`${Math.round(performance.now() - t0)} /health ${code}\n`)
      if (code === 200) health = performance.now() - t0
    }
    if (!Number.isNaN(health) && Number.isNaN(ready)) {
      const readiness = await status(`http://127.0.0.1:${port}/ready`)
      // A server without /ready (404) is ready once it prints its URLs.
      if (readiness === 200 || (readiness === 404 && !Number.isNaN(printed))) ready = performance.now() - t0
    }
    await sleep(20)
  }
  if (process.env["BENCH_DEBUG"] !== undefined) process.stderr.write(`health ${health} ready ${ready} printed ${printed}\n`)
  child.kill("SIGTERM")
  await exited
  return { health, ready, printed }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN
const row = (label: string, all: ReadonlyArray<Run>) =>
  `| ${label} | ${Math.round(median(all.map((r) => r.health)))} | ${Math.round(median(all.map((r) => r.ready)))} | ${Math.round(median(all.map((r) => r.printed)))} |`

const fresh: Array<Run> = []
const reused: Array<Run> = []
for (let i = 0; i < runs; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), "modelgate-bench-start-"))
  try {
    fresh.push(await once(dataDir))
    reused.push(await once(dataDir))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
process.stdout.write(
  [
    `example server start-up, median of ${runs} runs (ms from spawn)`,
    "| data directory | /health 200 | /ready 200 | URLs, token, API key printed |",
    "|---|---|---|---|",
    row("fresh", fresh),
    row("reused", reused),
    ""
  ].join("\n")
)
