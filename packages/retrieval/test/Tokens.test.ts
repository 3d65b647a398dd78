import { assert, describe, it } from "@effect/vitest"
import * as Tokens from "../src/Tokens.ts"

describe("Tokens", () => {
  it("splits snake_case, camelCase and digits", () => {
    assert.deepStrictEqual(Tokens.words("avg_departure_delay"), ["avg", "departure", "delay"])
    assert.deepStrictEqual(Tokens.words("grossMarginPct2024"), ["gross", "margin", "pct", "2024"])
    assert.deepStrictEqual(Tokens.words("HTTPServer"), ["http", "server"])
    assert.deepStrictEqual(Tokens.words("the shopper's state"), ["the", "shopper", "state"])
  })

  it("spells initialisms of names and finds acronyms in text", () => {
    assert.deepStrictEqual(Tokens.initialisms("annual_run_rate"), ["arr"])
    assert.deepStrictEqual(Tokens.initialisms("average_length_of_stay"), ["alos", "als"])
    assert.deepStrictEqual(Tokens.initialisms("avg_order_value"), ["aov"])
    assert.deepStrictEqual(Tokens.initialisms("revenue"), [])
    assert.deepStrictEqual(Tokens.acronyms("our ARR and KPIs vs the US"), ["arr", "kpi"])
  })

  it("stems lightly and keeps real words", () => {
    assert.strictEqual(Tokens.stem("sources"), "source")
    assert.strictEqual(Tokens.stem("categories"), "category")
    assert.strictEqual(Tokens.stem("boxes"), "box")
    assert.strictEqual(Tokens.stem("status"), "status")
    assert.strictEqual(Tokens.stem("monthly"), "month")
    assert.strictEqual(Tokens.stem("shipping"), "ship")
    assert.strictEqual(Tokens.stem("cancelled"), Tokens.stem("cancellations"))
    assert.strictEqual(Tokens.stem("percentage"), "percent")
  })

  it("puts back the silent e that -ing and -ed took, and maps irregular past forms", () => {
    const same: Array<[string, string]> = [
      ["pricing", "price"], ["priced", "price"], ["rated", "rate"], ["rating", "rate"], ["closed", "close"],
      ["closing", "close"], ["produced", "produce"], ["sourcing", "source"], ["balanced", "balance"],
      ["received", "receive"], ["scheduled", "schedule"], ["located", "locate"], ["charged", "charge"],
      ["writing", "write"], ["stored", "store"], ["paid", "pay"], ["spent", "spend"], ["written", "write"]
    ]
    for (const [a, b] of same) assert.strictEqual(Tokens.stem(a), Tokens.stem(b), `${a} ~ ${b}`)
    // No e where the word has none.
    const kept: Array<[string, string]> = [
      ["shipped", "ship"], ["treated", "treat"], ["booking", "book"], ["opened", "open"], ["ordered", "order"],
      ["delayed", "delay"], ["returned", "return"], ["billing", "bill"], ["formatted", "format"], ["eating", "eat"],
      ["churned", "churn"], ["landing", "land"], ["visited", "visit"]
    ]
    for (const [a, b] of kept) assert.strictEqual(Tokens.stem(a), b, a)
  })

  it("drops stopwords from text and expands abbreviations in identifiers", () => {
    assert.deepStrictEqual(Tokens.terms("What is the return rate for each brand?"), ["return", "rate", "brand"])
    assert.deepStrictEqual(Tokens.nameTerms("avg_departure_delay"), ["average", "departure", "delay"])
    assert.deepStrictEqual(Tokens.nameTerms("gross_margin_pct"), ["gross", "margin", "percent"])
    assert.deepStrictEqual(Tokens.analyze("Traffic sources"), [{ term: "traffic", word: "traffic" }, { term: "source", word: "sources" }])
  })

  it("normalizes values for comparison", () => {
    assert.strictEqual(Tokens.normalize("  Low-Cost "), "low cost")
    assert.strictEqual(Tokens.normalize("Tops & Tees"), "tops tees")
  })
})
