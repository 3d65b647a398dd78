import { assert, describe, it } from "@effect/vitest"
import * as Tokens from "../src/Tokens.ts"
import * as ValueIndex from "../src/ValueIndex.ts"

const index = ValueIndex.make([
  { field: 0, values: [{ text: "Footwear", count: 50 }, { text: "Tops & Tees", count: 40 }, { text: "Camping Gear", count: 5 }] },
  { field: 1, values: [{ text: "Cancelled", count: 9 }, { text: "Complete", count: 90 }] },
  { field: 2, values: [{ text: "National Air System", count: 3 }, { text: "Weather", count: 7 }] },
  { field: 3, values: [{ text: "Denver", count: 12 }, { text: "", count: 1 }] }
])

describe("ValueIndex", () => {
  it("matches stored values exactly, then case-insensitively", () => {
    const [exact] = ValueIndex.lookup(index, "Footwear")
    assert.deepStrictEqual([exact?.field, exact?.kind, exact?.score], [0, "exact", 1])
    const [lower] = ValueIndex.lookup(index, "cancelled")
    assert.deepStrictEqual([lower?.field, lower?.value, lower?.kind], [1, "Cancelled", "case"])
    assert.isTrue(ValueIndex.has(index, "tops and tees") === false && ValueIndex.has(index, "TOPS & TEES"))
  })

  it("matches misspellings by edit distance, and not short or distant words", () => {
    const [fuzzy] = ValueIndex.lookup(index, "Fotwear")
    assert.deepStrictEqual([fuzzy?.value, fuzzy?.kind], ["Footwear", "fuzzy"])
    assert.isBelow(fuzzy?.score ?? 1, ValueIndex.scores.case)
    assert.deepStrictEqual(ValueIndex.lookup(index, "Denvre").map((m) => m.value), [])
    assert.deepStrictEqual(ValueIndex.lookup(index, "Dnver").map((m) => m.value), ["Denver"])
    assert.deepStrictEqual(ValueIndex.lookup(index, "Pride"), [])
    assert.deepStrictEqual(ValueIndex.lookup(index, "bread"), [])
  })

  it("matches values by most of their words", () => {
    const [partial] = ValueIndex.lookup(index, "air system")
    assert.deepStrictEqual([partial?.value, partial?.kind], ["National Air System", "partial"])
    assert.deepStrictEqual(ValueIndex.lookup(index, "gear").map((m) => m.value), ["Camping Gear"])
    assert.deepStrictEqual(ValueIndex.lookup(index, "national").map((m) => m.value), [])
  })

  it("computes edit distances with an early exit", () => {
    assert.strictEqual(ValueIndex.editDistance("kitten", "sitting"), 3)
    assert.isAbove(ValueIndex.editDistance("kitten", "sitting", 1), 1)
  })

  it("samples a field's values, the matched ones first", () => {
    assert.deepStrictEqual(ValueIndex.sample(index, 0, ["Camping Gear"], 2), ["Camping Gear", "Footwear"])
    assert.strictEqual(ValueIndex.fieldSize(index, 3), 1)
  })

  it("finds the same fuzzy and partial matches as comparing every value", () => {
    // Deterministic values over a small alphabet, so many share trigrams and words, some repeated
    // across fields (one spelling, several values); counts differ so no tie depends on order.
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const syllables = ["den", "ver", "ren", "o", "dal", "las", "sa", "van", "nah", "on", "tar", "io", "ken", "t"]
    const word = () => Array.from({ length: 2 + Math.floor(next() * 3) }, () => syllables[Math.floor(next() * syllables.length)]).join("")
    const fields = Array.from({ length: 6 }, (_, field) => {
      const texts = new Set<string>()
      while (texts.size < 120) texts.add(next() < 0.3 ? `${word()} ${word()}` : word())
      return { field, values: [...texts].map((text, i) => ({ text: i % 3 === 0 ? text.toUpperCase() : text, count: 1000 - i - field * 7 })) }
    })
    const big = ValueIndex.make(fields)
    const grams = (norm: string) => {
      const padded = `  ${norm} `
      const out = new Set<string>()
      for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3))
      return out
    }
    // The definition: every value compared with the text.
    const reference = (text: string) => {
      const norm = Tokens.normalize(text)
      const terms = [...new Set(Tokens.terms(text))]
      const exact = fields.some((f) => f.values.some((v) => v.text.toLowerCase() === norm))
      const best = new Map<number, { value: string; kind: string; score: number; count: number }>()
      for (const { field, values } of fields) {
        for (const v of values) {
          const vn = v.text.toLowerCase()
          const offer = (kind: string, score: number) => {
            const current = best.get(field)
            if (current === undefined || score > current.score || (score === current.score && v.count > current.count)) {
              best.set(field, { value: v.text, kind, score, count: v.count })
            }
          }
          if (vn === norm) offer(v.text === text ? "exact" : "case", v.text === text ? 1 : 0.96)
          const vt = [...new Set(Tokens.terms(v.text))]
          if (vn !== norm && terms.length > 0 && terms.every((t) => vt.includes(t)) && terms.length / vt.length >= 0.5) {
            offer("partial", 0.8 * terms.length / Math.max(terms.length, vt.length))
          }
          if (!exact && norm.length >= 5 && vn.length >= 4) {
            const a = grams(norm)
            const b = grams(vn)
            const shared = [...a].filter((g) => b.has(g)).length
            const longer = Math.max(norm.length, vn.length)
            const max = Math.floor(longer * (1 - ValueIndex.fuzzyMinSimilarity))
            const d = ValueIndex.editDistance(norm, vn)
            if ((2 * shared) / (a.size + b.size) >= 0.45 && d > 0 && d <= max) offer("fuzzy", 0.85 * (1 - d / longer))
          }
        }
      }
      return [...best.entries()].map(([field, m]) => `${field}:${m.value}:${m.kind}:${m.score.toFixed(6)}`).sort()
    }
    const probes: Array<string> = []
    for (const { values } of fields) {
      for (const v of values.slice(0, 40)) {
        const t = v.text.toLowerCase()
        const at = Math.floor(next() * t.length)
        probes.push(t, t.slice(0, at) + t.slice(at + 1), t.slice(0, at) + "e" + t.slice(at), t.split(" ")[0] ?? t)
      }
    }
    let fuzzy = 0
    for (const text of probes) {
      const got = ValueIndex.lookup(big, text).map((m) => `${m.field}:${m.value}:${m.kind}:${m.score.toFixed(6)}`).sort()
      assert.deepStrictEqual(got, reference(text), text)
      fuzzy += got.filter((g) => g.includes(":fuzzy:")).length
    }
    assert.isAbove(fuzzy, 100)
  })
})
