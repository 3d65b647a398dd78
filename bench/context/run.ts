/**
 * get_context benchmark: p50/p95 of `Retrieval.search` on the fixture packages (ecommerce,
 * flights; loaded for real through the Malloy runtime) over the sample and dev questions, and on
 * a generated model of 10,000 entities and 100,000 indexed values (`synthetic.ts`, served by
 * `SemanticRuntime.layerMemoryWith`); beside each, the index build time, the process memory the
 * index holds and the size of the JSON the MCP tool returns (`sources`, `next_steps`,
 * `modeling_documentation`, as `McpTools.getContext` serializes it).
 *
 *   npm run bench:context [-- --rounds 20 --entities 10000 --dump results.json]
 *
 * `--dump` writes every answer (question → sources, phrases, entities) so two revisions of the
 * ranking can be compared for identical results.
 */
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Runtime } from "@modelgate/malloy"
import { EntityIndex, Guidance, Retrieval } from "@modelgate/retrieval"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve, sep } from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as Synthetic from "./synthetic.ts"

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? process.argv[at + 1] : undefined
}
const rounds = Number(arg("rounds") ?? 20)
const entityCount = Number(arg("entities") ?? 10_000)
const dump = arg("dump")
/** `fixtures` or `generated` runs one part only. */
const only = arg("only")
const root = resolve(import.meta.dirname, "../..")
const shared = resolve(root, "../shared/fixtures/packages")
const fixtures = existsSync(shared) ? shared : join(root, "examples/server/demo/packages")
const questionsDir = join(root, "packages/retrieval/test")

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heap = () => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, rss: m.rss }
}
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? 0

const readQuestions = (file: string): Array<{ question: string; package?: string | undefined }> =>
  readFileSync(join(questionsDir, file), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => {
    const q = JSON.parse(l) as { question: string; scope: { package_name?: string } }
    return { question: q.question, package: q.scope.package_name }
  })

const readPackage = (name: string): PackageStore.PackageFiles => {
  const dir = join(fixtures, name)
  const files = new Map<string, Uint8Array>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(dir, path).split(sep).join("/"), readFileSync(path))
  }
  return files
}

const location = (pkg: string): SemanticRuntime.VersionLocation => ({
  organization: "bench", environment: "demo", package: pkg, version: "1.0.0", location: `bench/demo/${pkg}/1.0.0`
})

/** The bytes of the text content `get_context` returns over MCP for a result. */
const responseBytes = (result: Retrieval.SearchResult) =>
  Buffer.byteLength(JSON.stringify({
    sources: result.sources,
    next_steps: Guidance.nextSteps,
    modeling_documentation: Guidance.modelingDocumentation
  }))

const fixedBytes = Buffer.byteLength(JSON.stringify({ sources: [], next_steps: Guidance.nextSteps, modeling_documentation: Guidance.modelingDocumentation }))

interface Case {
  readonly question: string
  readonly targets: ReadonlyArray<Retrieval.Target>
}

const answers: Record<string, unknown> = {}

/** Searches every case once to warm up, then `rounds` times, timing each search. */
const measure = (label: string, cases: ReadonlyArray<Case>) =>
  Effect.gen(function*() {
    const retrieval = yield* Retrieval.Retrieval
    const sizes: Array<number> = []
    for (const c of cases) {
      const result = yield* retrieval.search({ question: c.question, targets: c.targets })
      sizes.push(responseBytes(result))
      answers[`${label}: ${c.question}`] = {
        phrases: result.phrases.map((p) => `${p.text}|${p.kind}`),
        sources: result.sources.map((s) => ({
          source: `${s.package_name}/${s.model_uri}/${s.source_name}`,
          phrases: s.phrases.map((p) => ({ phrase: p.phrase, entities: p.entities.map((e) => `${e.name}:${e.score}:${e.match_reason}:${(e.values ?? []).join("|")}`) }))
        }))
      }
    }
    const times: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      for (const c of cases) {
        const start = performance.now()
        yield* retrieval.search({ question: c.question, targets: c.targets })
        times.push(performance.now() - start)
      }
    }
    times.sort((a, b) => a - b)
    const mean = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length)
    const max = Math.max(...sizes)
    console.log(
      `${label.padEnd(26)} ${String(cases.length).padStart(5)} ${String(times.length).padStart(7)} ${percentile(times, 0.5).toFixed(2).padStart(8)} ${percentile(times, 0.95).toFixed(2).padStart(8)} ${(times[times.length - 1] ?? 0).toFixed(2).padStart(8)} ${(mean / 1024).toFixed(1).padStart(9)} ${(max / 1024).toFixed(1).padStart(8)} ${String(Math.round(mean / 4)).padStart(10)}`
    )
  })

const header = () =>
  console.log(`${"search".padEnd(26)} ${"cases".padStart(5)} ${"runs".padStart(7)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"max ms".padStart(8)} ${"mean KiB".padStart(9)} ${"max KiB".padStart(8)} ${"~tokens".padStart(10)}`)

const fixtureBench = Effect.gen(function*() {
  const retrieval = yield* Retrieval.Retrieval
  const store = yield* PackageStore.PackageStore
  const packages = ["ecommerce", "flights"]
  for (const p of packages) yield* store.put(location(p).location, readPackage(p))
  const before = heap()
  const started = performance.now()
  const built: Array<string> = []
  for (const p of packages) {
    const t = performance.now()
    const summary = yield* retrieval.build(location(p))
    built.push(`${p} ${summary.entities} entities, ${summary.values} values in ${(performance.now() - t).toFixed(0)} ms`)
  }
  const buildMillis = performance.now() - started
  const after = heap()
  console.log(`\nfixtures (${fixtures}): ${built.join("; ")}`)
  console.log(`  build ${buildMillis.toFixed(0)} ms (Malloy compile + value queries on DuckDB + index); heap +${mb(after.heapUsed - before.heapUsed)}, rss +${mb(after.rss - before.rss)}`)
  const targets = (pkg: string | undefined) =>
    packages.filter((p) => pkg === undefined || p === pkg).map((p): Retrieval.Target => ({ project: "demo", package: p, version: location(p) }))
  const cases = [...readQuestions("questions.sample.jsonl"), ...readQuestions("questions.dev.jsonl")]
    .map((q): Case => ({ question: q.question, targets: targets(q.package) }))
  header()
  yield* measure("fixtures sample+dev", cases)
})

const syntheticBench = (model: Synthetic.Synthetic) => Effect.gen(function*() {
  const retrieval = yield* Retrieval.Retrieval
  const version = location("generated")
  const before = heap()
  const started = performance.now()
  const summary = yield* retrieval.build(version)
  const buildMillis = performance.now() - started
  const after = heap()
  console.log(`\ngenerated model: ${summary.entities} entities, ${summary.values} indexed values (${model.questions.length} questions)`)
  console.log(`  build ${buildMillis.toFixed(0)} ms (in-memory runtime: index only); heap +${mb(after.heapUsed - before.heapUsed)}, rss +${mb(after.rss - before.rss)}`)
  header()
  yield* measure(`generated ${Math.round(summary.entities / 1000)}k/${Math.round(summary.values / 1000)}k`, model.questions.map((question) => ({
    question,
    targets: [{ project: "bench", package: "generated", version }]
  })))
})

const main = Effect.gen(function*() {
  console.log(`get_context search latency (Retrieval.search, warm index; ${rounds} rounds; ms); node ${process.version}`)
  console.log(`response: the tool's JSON text (sources + next_steps + modeling_documentation, the fixed part ${(fixedBytes / 1024).toFixed(1)} KiB); ~tokens = bytes / 4`)
  if (only !== "generated") {
    yield* fixtureBench.pipe(
      Effect.provide(Retrieval.layer().pipe(
        Layer.provideMerge(Runtime.layer({ cacheDir: mkdtempSync(join(tmpdir(), "modelgate-bench-context-")), queryTimeoutMillis: 60_000 })),
        Layer.provideMerge(Layer.merge(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory))
      ))
    )
  }
  if (only !== "fixtures") {
    const generated = Synthetic.generate({
      entities: entityCount,
      seed: 42,
      valueColumn: EntityIndex.valueColumn,
      countColumn: EntityIndex.countColumn,
      autoValueCap: EntityIndex.autoValueCap
    })
    yield* syntheticBench(generated).pipe(
      Effect.provide(Retrieval.layer().pipe(
        Layer.provideMerge(SemanticRuntime.SemanticRuntime.layerMemoryWith({ models: [generated.model], run: generated.run }))
      ))
    )
  }
  if (dump !== undefined) writeFileSync(dump, JSON.stringify(answers, null, 1))
})

Effect.runPromise(Effect.scoped(main)).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
