/**
 * The held-out packages (saas, hospital, insurance) compile through the real Malloy runtime, carry the
 * documentation the fixture conventions ask for, and every view and named query runs and returns
 * rows. Every entity that the held-out questions expect exists in its package.
 */
import { assert, layer } from "@effect/vitest"
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Runtime } from "@modelgate/malloy"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { readPackage } from "../Fixtures.ts"

const packages = ["saas", "hospital", "insurance"] as const

const version = (pkg: string): SemanticRuntime.VersionLocation => ({
  organization: "acme",
  environment: "heldout",
  package: pkg,
  version: "1.0.0",
  location: `acme/heldout/${pkg}/1.0.0`
})

const seeded = Layer.effectDiscard(Effect.gen(function*() {
  const store = yield* PackageStore.PackageStore
  for (const p of packages) yield* store.put(version(p).location, readPackage(p))
}))

const TestLayer = Layer.mergeAll(
  Runtime.layer({ cacheDir: mkdtempSync(join(tmpdir(), "modelgate-heldout-test-")), queryTimeoutMillis: 30_000 }),
  seeded
).pipe(Layer.provideMerge(Layer.merge(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory)))

interface Question {
  readonly id: string
  readonly package: string | null
  readonly category: string
  readonly question: string
  readonly expect: ReadonlyArray<{ readonly phrase: string; readonly any_of: ReadonlyArray<string>; readonly value?: string }>
}
const questions: Array<Question> = ["questions.jsonl", "questions-insurance.jsonl"].flatMap((file) =>
  readFileSync(join(import.meta.dirname, file), "utf8")
    .split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Question))

/** `source.path.name` of an entity as the questions write it; a named query by its bare name. */
const pathOf = (e: SemanticRuntime.ModelEntity) => e.source === "" ? e.name : [e.source, ...e.path, e.name].join(".")

layer(TestLayer, { timeout: 120_000 })("held-out packages", (it) => {
  it.effect("compile with documented sources, fields and views, and every view and named query returns rows", () =>
    Effect.gen(function*() {
      const runtime = yield* SemanticRuntime.SemanticRuntime
      for (const pkg of packages) {
        const [model, ...others] = yield* runtime.describe(version(pkg))
        assert.strictEqual(others.length, 0)
        assert.strictEqual(model?.modelPath, `${pkg}.malloy`)
        if (model === undefined) return
        const own = model.entities.filter((e) => e.path.length === 0)
        const documented = (kind: SemanticRuntime.EntityKind) =>
          new Set(own.filter((e) => e.kind === kind && e.doc !== undefined).map((e) => `${e.source}.${e.name}`)).size
        assert.isAtLeast(documented("source"), 5, pkg)
        assert.isAtLeast(documented("dimension"), 18, pkg)
        assert.isAtLeast(documented("measure"), 12, pkg)
        const views = own.filter((e) => e.kind === "view")
        assert.isAtLeast(views.length, 7, pkg)
        for (const v of views) assert.isDefined(v.doc, `${pkg} ${v.source}.${v.name} has no doc`)
        const queries = model.entities.filter((e) => e.kind === "query")
        const sources = new Set(own.filter((e) => e.kind === "source").map((e) => e.name)).size
        if (process.env["HELDOUT_DEBUG"] !== undefined) for (const e of model.entities) console.log("ENTITY", pkg, e.kind, pathOf(e), e.doc === undefined ? "-" : "doc")
        console.log(`${pkg}: ${sources} sources, ${documented("dimension")} documented dimensions, ${documented("measure")} documented measures, ${views.length} views, ${queries.length} queries, ${model.entities.length} entities with join paths`)
        assert.strictEqual(queries.length, 2, pkg)
        const runs = [
          ...views.map((v) => ({ sourceName: v.source, queryName: v.name })),
          ...queries.map((q) => ({ sourceName: "", queryName: q.name }))
        ]
        for (const r of runs) {
          const result = yield* runtime.execute(version(pkg), { _tag: "Named", modelPath: model.modelPath, ...r }, { rowLimit: 50 })
          assert.isAbove(result.rows.length, 0, `${pkg} ${r.sourceName}.${r.queryName} returned no rows`)
        }
      }
    }))

  it.effect("every entity a held-out question expects exists, and every expected value is stored", () =>
    Effect.gen(function*() {
      const runtime = yield* SemanticRuntime.SemanticRuntime
      const known = new Map<string, Set<string>>()
      for (const pkg of packages) {
        const [model] = yield* runtime.describe(version(pkg))
        known.set(pkg, new Set((model?.entities ?? []).map(pathOf)))
      }
      for (const q of questions) {
        if (q.package === null) {
          assert.strictEqual(q.expect.length, 0, q.id)
          continue
        }
        const entities = known.get(q.package)
        if (entities === undefined) continue // a question about a fixture package (ecommerce, flights)
        for (const e of q.expect) {
          assert.include(q.question, e.phrase, q.id)
          for (const p of e.any_of) assert.isTrue(entities.has(p), `${q.id}: ${p} is not an entity of ${q.package}`)
          if (e.value === undefined) continue
          const [source, ...rest] = e.any_of[0]!.split(".")
          const field = rest.join(".")
          const result = yield* runtime.execute(version(q.package), {
            _tag: "Custom",
            modelPath: `${q.package}.malloy`,
            query: `run: ${source} -> { where: ${field} = '${e.value.replaceAll("'", "\\'")}'; aggregate: n is count() }`
          }, { rowLimit: 1 })
          assert.isAbove(Number(result.rows[0]?.["n"]), 0, `${q.id}: no ${field} = ${e.value}`)
        }
      }
    }))
})
