import { assert, describe, it } from "@effect/vitest"
import * as Bm25 from "../src/Bm25.ts"

const docs = [["return", "rate"], ["return", "reason"], ["total", "sale"], ["brand"], ["sale", "price", "sale"]]

describe("Bm25", () => {
  it("ranks documents holding rarer query terms higher", () => {
    const index = Bm25.make(docs)
    const scores = Bm25.scoreAll(index, ["return", "rate"])
    assert.isAbove(scores[0] ?? 0, scores[1] ?? 0)
    assert.strictEqual(scores[3], 0)
    assert.isAbove(Bm25.idf(index, "rate"), Bm25.idf(index, "return"))
    assert.strictEqual(Bm25.documentFrequency(index, "sale"), 2)
  })

  it("normalizes to 0–1, an unknown query word lowering the score", () => {
    const index = Bm25.make(docs)
    const full = Bm25.scoreAllNormalized(index, ["brand"])
    assert.strictEqual(full[3], 1)
    const diluted = Bm25.scoreAllNormalized(index, ["brand", "sourdough"])
    assert.isBelow(diluted[3] ?? 1, 0.6)
    assert.isAbove(diluted[3] ?? 0, 0)
    assert.deepStrictEqual([...Bm25.scoreAllNormalized(index, [])], [0, 0, 0, 0, 0])
  })
})
