/**
 * get_context evaluation over MCP: every question of the fixtures' eval files is asked of the
 * example server's `get_context` tool (JSON-RPC `tools/call` over HTTP, `Authorization: ApiKey`),
 * with the question's `scope` as arguments, and judged by the retrieval package's rule
 * (`Evaluation.judge`): recall@1, recall@5 and MRR per category and overall, the size of the
 * answer the client reads, and for negative questions the entities returned (should be none).
 * A report, not a test: it exits 0 whatever the scores.
 *
 *   npm run eval:context [-- --questions '<dir|file|glob>'] [-- --url http://127.0.0.1:4000 --key <api key>]
 *
 * Without `--url` it starts the example server (built-in demo seed, embedded storage in a
 * temporary directory) and stops it at the end.
 */
import { Evaluation } from "@modelgate/retrieval"
import { Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { globSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { freePort } from "../support.ts"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { createInterface } from "node:readline"

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? process.argv[at + 1] : undefined
}
const root = resolve(import.meta.dirname, "../..")

/** The question files: a directory's `*.jsonl`, a file, or a glob. */
const questionFiles = (spec: string): Array<string> => {
  const exists = (p: string) => {
    try {
      return statSync(p)
    } catch {
      return undefined
    }
  }
  const stat = exists(spec)
  if (stat?.isDirectory() === true) return globSync("*.jsonl", { cwd: spec }).map((f) => join(spec, f)).sort()
  if (stat?.isFile() === true) return [spec]
  return globSync(spec).sort()
}

/** The example server with the demo seed in a fresh data directory; resolves with its API key. */
const startServer = (port: number, dataDir: string) =>
  new Promise<{ process: ChildProcess; key: string }>((done, fail) => {
    const { MODELGATE_SEED: _seed, ...env } = process.env
    const p = spawn(process.execPath, ["--conditions=@modelgate/source", join(root, "examples/server/src/main.ts")], {
      env: { ...env, PORT: String(port), HOST: "127.0.0.1", MODELGATE_DATA_DIR: dataDir, DATABASE_URL: "", MODELGATE_REQUEST_LOG: "false" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    if (p.stdout === null) return fail(new Error("no stdout"))
    createInterface({ input: p.stdout }).on("line", (line) => {
      const key = /^\s+API key:\s+(\S+)/.exec(line)?.[1]
      if (key !== undefined) done({ process: p, key })
    })
    p.on("exit", (code) => fail(new Error(`server exited with ${code}`)))
  })

const RpcResponse = Schema.Struct({
  result: Schema.optionalKey(Schema.Struct({
    isError: Schema.optionalKey(Schema.Boolean),
    content: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.String })),
    structuredContent: Schema.optionalKey(Schema.Unknown)
  })),
  error: Schema.optionalKey(Schema.Struct({ code: Schema.Number, message: Schema.String }))
})
const decodeRpc = Schema.decodeUnknownSync(RpcResponse)
const decodeAnswer = Schema.decodeUnknownSync(Evaluation.Answer)

interface Asked {
  readonly question: Evaluation.Question
  readonly answer: Evaluation.Answer
  readonly bytes: number
  readonly millis: number
}

const ask = async (url: string, key: string, q: Evaluation.Question, id: number): Promise<Asked> => {
  const started = performance.now()
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { authorization: `ApiKey ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "get_context", arguments: { natural_language_query: q.question, ...q.scope } }
    })
  })
  const body = decodeRpc(await response.json())
  const millis = performance.now() - started
  const result = body.result
  if (result === undefined || result.isError === true) {
    throw new Error(`${q.id}: get_context failed (HTTP ${response.status}): ${body.error?.message ?? result?.content[0]?.text ?? "no result"}`)
  }
  // The size the client (a model's context) reads: the tool's text content.
  const bytes = result.content.reduce((sum, c) => sum + Buffer.byteLength(c.text), 0)
  return { question: q, answer: decodeAnswer(result.structuredContent), bytes, millis }
}

const fixed = (x: number) => x.toFixed(3)
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)}`
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

const report = (asked: ReadonlyArray<Asked>, files: ReadonlyArray<string>) => {
  const lines: Array<string> = []
  lines.push(`get_context over MCP: ${asked.length} questions from ${files.map((f) => basename(f)).join(", ")}`)
  lines.push("")
  lines.push(`| category | questions | expectations | recall@1 | recall@5 | MRR | answer KB (median / max) |`)
  lines.push(`|---|---:|---:|---:|---:|---:|---:|`)
  const row = (label: string, group: ReadonlyArray<Asked>) => {
    const outcomes = group.flatMap((a) => Evaluation.judge(a.question, a.answer))
    const m = Evaluation.metrics(outcomes)
    const scores = outcomes.length === 0 ? ["–", "–", "–"] : [fixed(m.recallAt1), fixed(m.recallAt5), fixed(m.mrr)]
    const sizes = group.map((a) => a.bytes)
    lines.push(`| ${label} | ${group.length} | ${m.expectations} | ${scores.join(" | ")} | ${kb(median(sizes))} / ${kb(Math.max(0, ...sizes))} |`)
  }
  const categories = [...new Set(asked.map((a) => a.question.category))]
  for (const c of categories) row(c, asked.filter((a) => a.question.category === c))
  row("**overall**", asked)
  lines.push("")
  const negatives = asked.filter((a) => a.question.expect.length === 0)
  const empty = negatives.filter((a) => a.answer.sources.length === 0)
  lines.push(`Negative questions: ${empty.length}/${negatives.length} returned no entities.`)
  for (const a of negatives) {
    const entities = Evaluation.entitiesOf(a.answer)
    lines.push(`- ${a.question.id} "${a.question.question}": ${entities.length === 0 ? "none" : entities.join(", ")}`)
  }
  const misses = asked.flatMap((a) => Evaluation.judge(a.question, a.answer).filter((o) => o.rank !== 0))
  lines.push("")
  lines.push(`Expectations not ranked first: ${misses.length}.`)
  for (const o of misses) {
    lines.push(`- ${o.id} "${o.phrase}": ${o.rank === undefined ? "not found" : `rank ${o.rank + 1}`}; top: ${o.top.slice(0, 3).join(", ") || "none"}`)
  }
  lines.push("")
  lines.push(`Latency per call (ms, client side, first call of a version builds its index): median ${median(asked.map((a) => a.millis)).toFixed(0)}, max ${Math.max(0, ...asked.map((a) => a.millis)).toFixed(0)}`)
  return lines.join("\n")
}

const main = async () => {
  const files = questionFiles(arg("questions") ?? resolve(root, "../shared/fixtures/eval"))
  if (files.length === 0) throw new Error("no question files found")
  const questions = files.flatMap((f) => Evaluation.readQuestions(f))
  let url = arg("url")?.replace(/\/+$/, "")
  let key = arg("key")
  let server: ChildProcess | undefined
  let dataDir: string | undefined
  if (url === undefined || key === undefined) {
    if (url !== undefined || key !== undefined) throw new Error("--url and --key go together")
    dataDir = mkdtempSync(join(tmpdir(), "modelgate-eval-context-"))
    const port = await freePort()
    const started = await startServer(port, dataDir)
    server = started.process
    url = `http://127.0.0.1:${port}`
    key = started.key
  }
  try {
    const asked: Array<Asked> = []
    let id = 0
    for (const q of questions) asked.push(await ask(url, key, q, ++id))
    console.log(report(asked, files))
  } finally {
    if (server !== undefined) {
      const exited = new Promise((done) => server?.once("exit", done))
      server.kill("SIGTERM")
      await exited
    }
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
