/**
 * The held-out set (`test/heldout`: saas, hospital and insurance packages, questions written without
 * looking at the implementation) through the real Malloy runtime, all five packages in one project
 * as the eval server serves them. Tuning used the dev set and saas; hospital and then insurance
 * were validation sets, each measured first and used to find general faults after (see
 * docs/retrieval.md). The floors sit a margin under what the code reaches, so a regression fails.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import * as Evaluation from "../src/Evaluation.ts"
import * as Retrieval from "../src/Retrieval.ts"
import * as Fixtures from "./Fixtures.ts"

const questions = [
  ...Evaluation.readQuestions(join(import.meta.dirname, "heldout/questions.jsonl")),
  ...Evaluation.readQuestions(join(import.meta.dirname, "heldout/questions-insurance.jsonl"))
]
/**
 * Floors: what the code reaches (saas 0.946 / 0.824 with view questions 4/4 in the top 5, hospital
 * 0.972 / 0.913, insurance 0.833 / 0.809, 10/10 empty) less a margin. The insurance package came
 * later, written blind; its first measurement was 0.750 / 0.692 with 8/10 negatives empty (see
 * docs/retrieval.md for what changed since and on which evidence).
 */
const SAAS_RECALL5 = 0.91
const SAAS_MRR = 0.8
const SAAS_VIEW_RECALL5 = 0.75
const HOSPITAL_RECALL5 = 0.94
const HOSPITAL_MRR = 0.88
const INSURANCE_RECALL5 = 0.8
const INSURANCE_MRR = 0.78
const NEGATIVES_EMPTY = 10
const all = [...Fixtures.packages, ...Fixtures.heldoutPackages]

const run = (subset: ReadonlyArray<Evaluation.Question>, label: string) =>
  Effect.gen(function*() {
    const retrieval = yield* Retrieval.Retrieval
    const outcomes: Array<Evaluation.Outcome> = []
    const categorized: Array<Evaluation.CategoryOutcome> = []
    const negatives: Array<{ id: string; entities: ReadonlyArray<string> }> = []
    for (const q of subset) {
      const result = yield* retrieval.search({ question: q.question, targets: Fixtures.targets(q.scope.package_name, all) })
      const judged = Evaluation.judge(q, result)
      outcomes.push(...judged)
      categorized.push(...judged.map((outcome) => ({ category: q.category, outcome })))
      if (q.expect.length === 0) negatives.push({ id: q.id, entities: Evaluation.entitiesOf(result) })
      if (process.env["RETRIEVAL_DEBUG"] !== undefined) {
        console.log(q.id, q.question, JSON.stringify(result.phrases.map((p) => `${p.text}|${p.kind}`)))
        for (const o of judged) console.log("   ", o.rank === undefined ? "MISS" : `@${o.rank}`, o.phrase, o.top.join(" "))
        if (q.expect.length === 0 && result.sources.length > 0) {
          console.log("   NEG", JSON.stringify(result.sources.map((s) => s.phrases.map((p) => `${p.phrase}:${p.entities[0]?.name}:${p.overall_score}`))))
        }
      }
    }
    const m = Evaluation.metrics(outcomes)
    const empty = negatives.filter((n) => n.entities.length === 0).length
    console.log(`${label}: ${subset.length} questions, ${m.expectations} expectations, recall@1 ${m.recallAt1.toFixed(3)}, recall@5 ${m.recallAt5.toFixed(3)}, MRR ${m.mrr.toFixed(3)}, negatives empty ${empty}/${negatives.length}`)
    if (categorized.length > 0) console.log(Evaluation.formatByCategory(categorized))
    return { outcomes, metrics: m, empty, negatives: negatives.length }
  })

layer(Fixtures.RetrievalLayer, { timeout: 300_000 })("Retrieval over the held-out packages", (it) => {
  it.effect("saas (tuned on): recall@5 and MRR floors, values first", () =>
    Effect.gen(function*() {
      const saas = questions.filter((q) => q.package === "saas")
      const { outcomes, metrics } = yield* run(saas, "heldout saas")
      assert.isAtLeast(metrics.recallAt5, SAAS_RECALL5)
      assert.isAtLeast(metrics.mrr, SAAS_MRR)
      const views = new Set(saas.filter((q) => q.category === "view").map((q) => q.id))
      assert.isAtLeast(Evaluation.metrics(outcomes.filter((o) => views.has(o.id))).recallAt5, SAAS_VIEW_RECALL5)
      for (const o of outcomes.filter((o) => o.value !== undefined)) assert.isTrue(o.valueListed, `${o.id}: value ${o.value} listed`)
    }))

  it.effect("hospital (validation): recall@5 and MRR floors, values first", () =>
    Effect.gen(function*() {
      const { outcomes, metrics } = yield* run(questions.filter((q) => q.package === "hospital"), "heldout hospital")
      assert.isAtLeast(metrics.recallAt5, HOSPITAL_RECALL5)
      assert.isAtLeast(metrics.mrr, HOSPITAL_MRR)
      for (const o of outcomes.filter((o) => o.value !== undefined)) assert.isTrue(o.valueListed, `${o.id}: value ${o.value} listed`)
    }))

  it.effect("insurance (blind validation): recall@5 and MRR floors, values first", () =>
    Effect.gen(function*() {
      const { outcomes, metrics } = yield* run(questions.filter((q) => q.package === "insurance"), "heldout insurance")
      assert.isAtLeast(metrics.recallAt5, INSURANCE_RECALL5)
      assert.isAtLeast(metrics.mrr, INSURANCE_MRR)
      for (const o of outcomes.filter((o) => o.value !== undefined)) assert.isTrue(o.valueListed, `${o.id}: value ${o.value} listed`)
    }))

  it.effect("negatives: off-topic questions return nothing", () =>
    Effect.gen(function*() {
      const { empty, negatives } = yield* run(questions.filter((q) => q.expect.length === 0), "heldout negatives")
      assert.isAtLeast(empty, NEGATIVES_EMPTY)
      assert.isAtMost(empty, negatives)
      // The dev set's off-topic questions stay empty with all five packages in the project.
      const dev = yield* run(Evaluation.readQuestions(join(import.meta.dirname, "questions.dev.jsonl")).filter((q) => q.expect.length === 0), "dev negatives, five packages")
      assert.strictEqual(dev.empty, dev.negatives)
    }))

  it.effect("negatives: everyday questions using glossary words (doctor, medicine, late, staff) return nothing", () =>
    Effect.gen(function*() {
      const offTopic = [
        "Who was the first doctor to win a Nobel prize?",
        "Should I take medicine for a cold or just rest?",
        "How late is the pharmacy open on Sunday?",
        "How do I write a polite resignation letter?",
        "What should the staff wear to the summer party?",
        "Is it safe to drive a truck through deep snow?",
        "Which shop sells the cheapest running shoes?",
        "How do I deal with the death of a pet?"
      ]
      const retrieval = yield* Retrieval.Retrieval
      const answered: Array<string> = []
      for (const question of offTopic) {
        const result = yield* retrieval.search({ question, targets: Fixtures.targets(undefined, all) })
        const entities = Evaluation.entitiesOf(result)
        if (entities.length > 0) answered.push(`${question} → ${JSON.stringify(result.phrases.map((p) => p.text))} ${entities.slice(0, 3).join(" ")}`)
      }
      assert.deepStrictEqual(answered, [])
    }))
})
