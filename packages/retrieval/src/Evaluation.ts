/**
 * Evaluation of `get_context` answers against question files (`*.jsonl`, the fixtures' format):
 * one scoring rule shared by the retrieval tests (answers of `Retrieval.search`) and the
 * `eval:context` report (answers of the MCP tool). An expectation counts when one of its `any_of`
 * entities is among the first k entities of the phrase matching it. A returned entity named `a.b`
 * under source `S` is `S.a.b` (a source itself is `S`). The phrase matching an expectation is the
 * returned phrase sharing the most content words with it; on a tie the entities of the tied
 * phrases are merged by score.
 */
import { Schema } from "effect"
import { readFileSync } from "node:fs"
import * as Tokens from "./Tokens.ts"

/** One expectation of a question: a phrase of it and the entities that answer it. */
export const Expectation = Schema.Struct({
  phrase: Schema.String,
  any_of: Schema.Array(Schema.String),
  value: Schema.optionalKey(Schema.String)
})
/** One expectation of a question. */
export type Expectation = typeof Expectation.Type

/** A question of an eval file; `scope` is the `get_context` arguments besides the question. */
export const Question = Schema.Struct({
  id: Schema.String,
  package: Schema.NullOr(Schema.String),
  category: Schema.String,
  question: Schema.String,
  scope: Schema.Struct({ project_name: Schema.String, package_name: Schema.optionalKey(Schema.String) }),
  expect: Schema.Array(Expectation)
})
/** A question of an eval file. */
export type Question = typeof Question.Type

/**
 * What the rule reads of an answer: `sources` as `get_context` returns them (`Retrieval.search`'s
 * result and the MCP tool's `structuredContent` both fit; other members are ignored on decode).
 */
export const Answer = Schema.Struct({
  sources: Schema.Array(Schema.Struct({
    source_name: Schema.String,
    phrases: Schema.Array(Schema.Struct({
      phrase: Schema.String,
      entities: Schema.Array(Schema.Struct({
        name: Schema.String,
        field_type: Schema.String,
        score: Schema.Number,
        values: Schema.optionalKey(Schema.Array(Schema.String))
      }))
    }))
  }))
})
/** What the rule reads of an answer. */
export type Answer = typeof Answer.Type

const decodeQuestion = Schema.decodeUnknownSync(Schema.fromJsonString(Question))

/** Questions of a `.jsonl` text, one JSON object per non-blank line; throws on a malformed line. */
export const parseQuestions = (text: string): Array<Question> =>
  text.split("\n").filter((line) => line.trim() !== "").map((line) => decodeQuestion(line))

/** Questions of a `.jsonl` file. */
export const readQuestions = (path: string): Array<Question> => parseQuestions(readFileSync(path, "utf8"))

/** The entity's eval key. */
export const keyOf = (source: string, name: string, fieldType: string): string =>
  fieldType === "source" || source === "" ? name : `${source}.${name}`

const overlap = (a: string, b: string) => {
  const x = new Set(Tokens.terms(a))
  return Tokens.terms(b).filter((t) => x.has(t)).length
}

/** Ranked entity keys for an expectation, or undefined when no returned phrase overlaps it. */
export const rankedFor = (
  result: Answer,
  expected: string
): Array<{ key: string; score: number; values: ReadonlyArray<string> }> | undefined => {
  let best = 0
  const phrases = new Set<string>()
  for (const source of result.sources) {
    for (const p of source.phrases) {
      const o = overlap(expected, p.phrase) + (p.phrase.toLowerCase() === expected.toLowerCase() ? 100 : 0)
      if (o > best) {
        best = o
        phrases.clear()
      }
      if (o === best && o > 0) phrases.add(p.phrase)
    }
  }
  if (best === 0) return undefined
  const all: Array<{ key: string; score: number; depth: number; values: ReadonlyArray<string> }> = []
  for (const source of result.sources) {
    for (const p of source.phrases) {
      if (!phrases.has(p.phrase)) continue
      for (const e of p.entities) {
        all.push({ key: keyOf(source.source_name, e.name, e.field_type), score: e.score, depth: e.name.split(".").length, values: e.values ?? [] })
      }
    }
  }
  all.sort((x, y) => y.score - x.score || x.depth - y.depth)
  const seen = new Set<string>()
  return all.filter((x) => !seen.has(x.key) && (seen.add(x.key), true))
}

/** The outcome of one expectation. */
export interface Outcome {
  readonly id: string
  readonly phrase: string
  /** 0-based rank of the first acceptable entity, or undefined. */
  readonly rank: number | undefined
  readonly top: ReadonlyArray<string>
  readonly value: string | undefined
  readonly valueListed: boolean
}

/** Outcomes of a question's expectations. */
export const judge = (q: Question, result: Answer): Array<Outcome> =>
  q.expect.map((x) => {
    const ranked = rankedFor(result, x.phrase) ?? []
    const index = ranked.findIndex((r) => x.any_of.includes(r.key))
    const hit = ranked[index]
    return {
      id: q.id,
      phrase: x.phrase,
      rank: index < 0 ? undefined : index,
      top: ranked.slice(0, 5).map((r) => `${r.key}:${r.score}`),
      value: x.value,
      valueListed: x.value === undefined || (hit?.values.includes(x.value) ?? false)
    }
  })

/** The entity keys an answer returns, each once, in answer order (for negative questions: should be none). */
export const entitiesOf = (result: Answer): Array<string> => [
  ...new Set(result.sources.flatMap((s) => s.phrases.flatMap((p) => p.entities.map((e) => keyOf(s.source_name, e.name, e.field_type)))))
]

/** Outcomes of questions with their category, for per-category metrics. */
export interface CategoryOutcome {
  readonly category: string
  readonly outcome: Outcome
}

/** recall@1, recall@5 and MRR per category (in first-seen order), then `overall`. */
export const metricsByCategory = (outcomes: ReadonlyArray<CategoryOutcome>) => {
  const categories = [...new Set(outcomes.map((o) => o.category))]
  return [
    ...categories.map((category) => ({ category, ...metrics(outcomes.filter((o) => o.category === category).map((o) => o.outcome)) })),
    { category: "overall", ...metrics(outcomes.map((o) => o.outcome)) }
  ]
}

/** One line per category: `category n r@1 r@5 MRR`. */
export const formatByCategory = (outcomes: ReadonlyArray<CategoryOutcome>): string =>
  metricsByCategory(outcomes).map((m) =>
    `  ${m.category.padEnd(9)} ${String(m.expectations).padStart(3)}  r@1 ${m.recallAt1.toFixed(3)}  r@5 ${m.recallAt5.toFixed(3)}  MRR ${m.mrr.toFixed(3)}`
  ).join("\n")

/** recall@1, recall@5 and MRR of outcomes. */
export const metrics = (outcomes: ReadonlyArray<Outcome>) => {
  const n = Math.max(1, outcomes.length)
  return {
    expectations: outcomes.length,
    recallAt1: outcomes.filter((o) => o.rank === 0).length / n,
    recallAt5: outcomes.filter((o) => o.rank !== undefined && o.rank < 5).length / n,
    mrr: outcomes.reduce((sum, o) => sum + (o.rank === undefined ? 0 : 1 / (o.rank + 1)), 0) / n
  }
}
