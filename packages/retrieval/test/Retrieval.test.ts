/**
 * The retrieval service over the real demo packages: the index is built through the Malloy
 * runtime (values read by grouped queries), then every sample question and every dev question is
 * searched and judged; recall@5 must reach 0.9 on the sample, value questions must rank the
 * value's dimension first, and off-topic questions must find nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import { ContextIndex as CoreIndex } from "@modelgate/core"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import * as ContextIndex from "../src/ContextIndex.ts"
import * as Guidance from "../src/Guidance.ts"
import * as Retrieval from "../src/Retrieval.ts"
import * as Evaluation from "../src/Evaluation.ts"
import * as Fixtures from "./Fixtures.ts"

const sample = Evaluation.readQuestions(join(import.meta.dirname, "questions.sample.jsonl"))
const dev = Evaluation.readQuestions(join(import.meta.dirname, "questions.dev.jsonl"))

const TestLayer = ContextIndex.layer.pipe(Layer.provideMerge(Fixtures.RetrievalLayer))

const ask = (q: Evaluation.Question) =>
  Effect.gen(function*() {
    const retrieval = yield* Retrieval.Retrieval
    return yield* retrieval.search({ question: q.question, targets: Fixtures.targets(q.scope.package_name) })
  })

const run = (questions: ReadonlyArray<Evaluation.Question>, label: string) =>
  Effect.gen(function*() {
    const outcomes: Array<Evaluation.Outcome> = []
    const categorized: Array<Evaluation.CategoryOutcome> = []
    const negatives: Array<{ id: string; sources: number }> = []
    for (const q of questions) {
      const result = yield* ask(q)
      if (q.expect.length === 0) negatives.push({ id: q.id, sources: result.sources.length })
      const judged = Evaluation.judge(q, result)
      outcomes.push(...judged)
      categorized.push(...judged.map((outcome) => ({ category: q.category, outcome })))
      if (process.env["RETRIEVAL_DEBUG"] !== undefined) {
        console.log(q.id, q.question, JSON.stringify(result.phrases.map((p) => `${p.text}|${p.kind}`)))
        for (const o of judged) console.log("   ", o.rank === undefined ? "MISS" : `@${o.rank}`, o.phrase, o.top.join(" "))
        if (q.expect.length === 0 && result.sources.length > 0) console.log("   NEG", JSON.stringify(result.sources.map((s) => s.phrases.map((p) => `${p.phrase}:${p.entities[0]?.name}:${p.overall_score}`))))
      }
    }
    const m = Evaluation.metrics(outcomes)
    console.log(`${label}: ${questions.length} questions, ${m.expectations} expectations, recall@1 ${m.recallAt1.toFixed(3)}, recall@5 ${m.recallAt5.toFixed(3)}, MRR ${m.mrr.toFixed(3)}, negatives empty ${negatives.filter((n) => n.sources === 0).length}/${negatives.length}`)
    console.log(Evaluation.formatByCategory(categorized))
    return { outcomes, negatives, metrics: m }
  })

layer(TestLayer, { timeout: 300_000 })("Retrieval over the demo packages", (it) => {
  it.effect("builds each version's index through ContextIndex, reading dimension values", () =>
    Effect.gen(function*() {
      const index = yield* CoreIndex.ContextIndex
      for (const pkg of Fixtures.packages) {
        const progress: Array<CoreIndex.BuildProgress> = []
        const summary = yield* index.build(Fixtures.version(pkg), (p) => Effect.sync(() => void progress.push(p)))
        assert.isAbove(summary.entities, 50)
        assert.isAbove(summary.values, 20)
        const last = progress[progress.length - 1]
        assert.strictEqual(last?.step, "values")
        assert.strictEqual(last?.done, last?.total)
      }
    }))

  it.effect("lists a dimension's indexed values, the named one first", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const result = yield* retrieval.search({ question: "Orders placed through the Android App", targets: Fixtures.targets("ecommerce") })
      const orders = result.sources.find((s) => s.source_name === "orders")
      const channel = orders?.phrases.flatMap((p) => p.entities).find((e) => e.name === "channel")
      assert.strictEqual(channel?.match_reason, "value")
      assert.strictEqual(channel?.values?.[0], "Android App")
    }))

  it.effect("narrows to a source", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const [target] = Fixtures.targets("flights")
      assert.isDefined(target)
      if (target === undefined) return
      const result = yield* retrieval.search({
        question: "average departure delay by carrier",
        targets: [{ ...target, modelUri: "flights.malloy", sourceName: "carriers" }]
      })
      assert.isAbove(result.sources.length, 0)
      assert.isTrue(result.sources.every((s) => s.source_name === "carriers" && s.model_uri === "flights.malloy"))
    }))

  it.effect("sample questions: recall@5 ≥ 0.9, values first, negatives empty", () =>
    Effect.gen(function*() {
      const { outcomes, negatives, metrics } = yield* run(sample, "sample")
      assert.isAtLeast(metrics.recallAt5, 0.9)
      for (const o of outcomes.filter((o) => o.value !== undefined)) {
        assert.strictEqual(o.rank, 0, `${o.id} ${o.phrase}: ${o.top.join(" ")}`)
        assert.isTrue(o.valueListed, `${o.id}: value ${o.value} listed`)
      }
      for (const n of negatives) assert.strictEqual(n.sources, 0, `${n.id} returns nothing`)
    }))

  it.effect("dev questions: recall@5 ≥ 0.8, negatives empty", () =>
    Effect.gen(function*() {
      const { negatives, metrics } = yield* run(dev, "dev")
      assert.isAtLeast(metrics.recallAt5, 0.8)
      for (const n of negatives) assert.strictEqual(n.sources, 0, `${n.id} returns nothing`)
    }))

  it.effect("guidance texts cover the query syntax", () =>
    Effect.sync(() => {
      for (const word of ["group_by", "aggregate", "where", "having", "order_by", "limit", "nest", ".month", "@2024"]) {
        assert.include(Guidance.modelingDocumentation, word)
      }
      assert.isAbove(Guidance.nextSteps.length, 2)
    }))
})

describe("Evaluation", () => {
  // Guards the judge itself: a result naming the expected entity under the overlapping phrase counts.
  layer(Layer.empty)((it) => {
    it.effect("maps source + dotted name to source.field", () =>
      Effect.sync(() => {
        const result: Retrieval.SearchResult = {
          phrases: [],
          sources: [{
            project_name: "demo", package_name: "p", model_uri: "m.malloy", source_name: "order_items", version_id: "1",
            phrases: [{ phrase: "brand", phrase_description: "", overall_score: 0.9, entities: [
              { name: "products.brand", field_type: "dimension", data_type: "string", description: "", score: 0.9, match_reason: "name" }
            ] }]
          }]
        }
        const [hit] = Evaluation.judge({ id: "x", package: "p", category: "exact", question: "brand", scope: { project_name: "demo" }, expect: [{ phrase: "each brand", any_of: ["order_items.products.brand"] }] }, result)
        assert.strictEqual(hit?.rank, 0)
        const [miss] = Evaluation.judge({ id: "x", package: "p", category: "exact", question: "brand", scope: { project_name: "demo" }, expect: [{ phrase: "each brand", any_of: ["products.brand"] }] }, result)
        assert.strictEqual(miss?.rank, undefined)
      }))
  })
})
