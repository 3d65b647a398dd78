/**
 * The word-vector table: the binary format round-trips through `encode` and `fromBuffer`,
 * corrupt bytes and missing files fail with `WordVectorsUnavailable`, and the committed table
 * (`data/word-vectors.bin`) has the expected shape and gives semantically sensible answers.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as WordVectors from "../src/WordVectors.ts"

/** A tiny table: two "animal" words close together, a "vehicle" far from them. */
const tiny: ReadonlyArray<WordVectors.Entry> = [
  { word: "cat", vector: [1, 0.2, 0, 0] },
  { word: "dog", vector: [0.9, 0.3, 0.1, 0] },
  { word: "car", vector: [0, 0, 1, 0.5] },
  { word: "company", vector: [0, 1, 0, 0.1] },
  { word: "run", vector: [-0.3, 0, 0.2, 1] },
  { word: "color", vector: [0.5, -0.5, 0.5, -0.5] },
  { word: "long-term", vector: [0.1, 0.1, 0.1, 2] }
]

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0)
    na += (a[i] ?? 0) ** 2
    nb += (b[i] ?? 0) ** 2
  }
  return dot / Math.sqrt(na * nb)
}

const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0))

const failure = (bytes: Uint8Array) => WordVectors.fromBuffer(bytes, "test.bin").pipe(Effect.flip)

describe("WordVectors format", () => {
  it.effect("round-trips a synthetic table", () =>
    Effect.gen(function*() {
      const bytes = WordVectors.encode(tiny)
      assert.strictEqual(new TextDecoder().decode(bytes.subarray(0, 4)), "MGWV")
      const table = yield* WordVectors.fromBuffer(bytes)
      assert.strictEqual(table.size, tiny.length)
      assert.strictEqual(table.dimensions, 4)
      for (const { word, vector } of tiny) {
        const v = table.vector(word)
        assert.isDefined(v)
        assert.closeTo(norm(v), 1, 1e-6)
        assert.isAbove(cosine(v, vector), 0.999)
      }
      const expected = cosine(tiny[0]?.vector ?? [], tiny[1]?.vector ?? [])
      assert.closeTo(table.similarity("cat", "dog") ?? Number.NaN, expected, 0.01)
      assert.isAbove(table.similarity("cat", "dog") ?? 0, table.similarity("cat", "car") ?? 1)
      assert.closeTo(table.similarity("Cat ", "cat") ?? 0, 1, 1e-6)
      assert.isUndefined(table.similarity("cat", "zebra"))
      assert.isUndefined(table.vector("zebra"))
    }))

  it.effect("reads a table at an unaligned offset", () =>
    Effect.gen(function*() {
      const bytes = WordVectors.encode(tiny)
      const shifted = new Uint8Array(bytes.length + 1)
      shifted.set(bytes, 1)
      const table = yield* WordVectors.fromBuffer(shifted.subarray(1))
      assert.closeTo(table.similarity("cat", "dog") ?? 0, cosine(tiny[0]?.vector ?? [], tiny[1]?.vector ?? []), 0.01)
    }))

  it.effect("falls back to base forms of inflected and British spellings", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.fromBuffer(WordVectors.encode(tiny))
      assert.strictEqual(table.resolve("cats"), "cat")
      assert.strictEqual(table.resolve("companies"), "company")
      assert.strictEqual(table.resolve("running"), "run")
      assert.strictEqual(table.resolve("colours"), "color")
      assert.strictEqual(table.resolve("Long-Term"), "long-term")
      assert.isUndefined(table.resolve("carpet"))
      assert.deepStrictEqual(Array.from(table.vector("dogs") ?? []), Array.from(table.vector("dog") ?? [1]))
    }))

  it.effect("ranks words by their row (frequency order), through the same fallbacks", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.fromBuffer(WordVectors.encode(tiny))
      assert.deepStrictEqual([table.rank("cat"), table.rank("Dog"), table.rank("colours"), table.rank("running")], [0, 1, 5, 4])
      assert.isUndefined(table.rank("zebra"))
    }))

  it.effect("embeds a bag of words as a weighted, normalized mean", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.fromBuffer(WordVectors.encode(tiny))
      assert.isUndefined(table.embed(["zebra", "yak"]))
      assert.isUndefined(table.embed(["cat"], [0]))
      const alone = table.embed(["cat", "zebra"])
      assert.isDefined(alone)
      assert.closeTo(cosine(alone, table.vector("cat") ?? []), 1, 1e-6)
      const mixed = table.embed(["cat", "car"], [1, 3])
      assert.isDefined(mixed)
      assert.closeTo(norm(mixed), 1, 1e-6)
      // Weighted towards "car": closer to it than to "cat".
      assert.isAbove(cosine(mixed, table.vector("car") ?? []), cosine(mixed, table.vector("cat") ?? []))
    }))

  it.effect("finds nearest words best first, without the query word", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.fromBuffer(WordVectors.encode(tiny))
      const near = table.nearest("cats", 3)
      assert.deepStrictEqual(near.map((n) => n.word).slice(0, 1), ["dog"])
      assert.strictEqual(near.length, 3)
      assert.isFalse(near.some((n) => n.word === "cat"))
      for (const [i, n] of near.entries()) {
        assert.closeTo(n.similarity, table.similarity("cat", n.word) ?? Number.NaN, 1e-6)
        if (i > 0) assert.isAtMost(n.similarity, near[i - 1]?.similarity ?? Number.NaN)
      }
      assert.strictEqual(table.nearest("cat", 100).length, tiny.length - 1)
      assert.deepStrictEqual(table.nearest("zebra", 3), [])
      assert.deepStrictEqual(table.nearest("cat", 0), [])
      // Only the two most frequent rows: "cat" (excluded) and "dog".
      assert.deepStrictEqual(table.nearest("car", 5, { within: 2 }).map((n) => n.word), ["dog", "cat"])
      const byVector = table.nearestTo(table.vector("car") ?? [], 1)
      assert.strictEqual(byVector[0]?.word, "car")
      assert.closeTo(byVector[0]?.similarity ?? 0, 1, 1e-6)
    }))

  it("refuses input no table can hold", () => {
    assert.throws(() => WordVectors.encode([]), RangeError)
    assert.throws(() => WordVectors.encode([{ word: "a", vector: [1] }, { word: "a", vector: [2] }]), RangeError)
    assert.throws(() => WordVectors.encode([{ word: "a\nb", vector: [1] }]), RangeError)
    assert.throws(() => WordVectors.encode([{ word: "a", vector: [1, 2] }, { word: "b", vector: [1] }]), RangeError)
    assert.throws(() => WordVectors.encode([{ word: "a", vector: [0, 0] }]), RangeError)
  })

  it.effect("fails with WordVectorsUnavailable on corrupt bytes", () =>
    Effect.gen(function*() {
      const bytes = WordVectors.encode(tiny)
      const truncated = yield* failure(bytes.subarray(0, bytes.length - 1))
      assert.strictEqual(truncated._tag, "WordVectorsUnavailable")
      assert.strictEqual(truncated.path, "test.bin")
      assert.include(truncated.message, "test.bin")

      const badMagic = bytes.slice()
      badMagic[0] = 0x58
      assert.include((yield* failure(badMagic)).message, "magic")

      const badVersion = bytes.slice()
      new DataView(badVersion.buffer).setUint32(4, 2, true)
      assert.include((yield* failure(badVersion)).message, "version 2")

      const badCount = bytes.slice()
      new DataView(badCount.buffer).setUint32(8, tiny.length + 1, true)
      assert.strictEqual((yield* failure(badCount))._tag, "WordVectorsUnavailable")

      assert.include((yield* failure(new Uint8Array(3))).message, "header")
    }))

  it.effect("fails with WordVectorsUnavailable naming a missing file", () =>
    Effect.gen(function*() {
      const error = yield* WordVectors.load("/nonexistent/word-vectors.bin").pipe(Effect.flip)
      assert.strictEqual(error._tag, "WordVectorsUnavailable")
      assert.strictEqual(error.path, "/nonexistent/word-vectors.bin")
      assert.include(error.message, "/nonexistent/word-vectors.bin")
    }))
})

layer(WordVectors.WordVectors.layer)("the committed table", (it) => {
  it.effect("holds ~100k words of 100 dimensions", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.WordVectors
      assert.strictEqual(table.dimensions, 100)
      assert.isAtLeast(table.size, 95_000)
      assert.isAtMost(table.size, 105_000)
      // Loading again reuses the decoded table.
      assert.strictEqual(yield* WordVectors.load(), table)
      // Rows are in frequency order: function words first, rare words far down.
      assert.isBelow(table.rank("the") ?? Infinity, 10)
      assert.isBelow(table.rank("revenue") ?? Infinity, table.rank("amortization") ?? 0)
    }))

  it.effect("ranks related business words above unrelated ones", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.WordVectors
      const sim = (a: string, b: string) => {
        const s = table.similarity(a, b)
        assert.isDefined(s, `${a} / ${b}`)
        return s
      }
      assert.isAbove(sim("revenue", "sales"), sim("revenue", "airport"))
      assert.isAbove(sim("airline", "carrier"), sim("airline", "shoe"))
      assert.isAbove(sim("customer", "client"), sim("customer", "volcano"))
      assert.isAbove(sim("quantity", "amount"), sim("quantity", "poetry"))
      assert.isAbove(sim("revenue", "sales"), 0.5)
    }))

  it.effect("finds synonyms among the nearest words", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.WordVectors
      const near = table.nearest("revenue", 10).map((n) => n.word)
      assert.strictEqual(near.length, 10)
      assert.isTrue(["sales", "income", "profit", "earnings"].some((w) => near.includes(w)), near.join(", "))
      assert.include(table.nearest("airline", 10).map((n) => n.word), "carrier")
    }))

  it.effect("resolves plurals and British spellings missing from the vocabulary", () =>
    Effect.gen(function*() {
      const table = yield* WordVectors.WordVectors
      assert.isDefined(table.vector("airlines"))
      assert.isDefined(table.vector("Airline"))
      // Not in the 100k vocabulary themselves; their base forms are.
      assert.strictEqual(table.resolve("layovers"), "layover")
      assert.strictEqual(table.resolve("itemised"), "itemize")
      assert.isUndefined(table.vector("qzxv"))
    }))
})
