import { assert, describe, it } from "@effect/vitest"
import * as Glossary from "../src/Glossary.ts"
import * as Tokens from "../src/Tokens.ts"

const related = (text: string): Array<Array<string>> => Glossary.related(Tokens.terms(text)).map((s) => [...s].sort())

describe("Glossary", () => {
  it("links a word to the other terms of its groups", () => {
    assert.include(related("churn")[0] ?? [], "cancel")
    const headcount = related("headcount")[0] ?? []
    assert.include(headcount, "employee")
    assert.notInclude(headcount, "headcount")
  })

  it("a multi-word term needs all its words in the phrase", () => {
    assert.deepStrictEqual(related("receivables")[0]?.includes("outstand"), true)
    // "accounts" alone is a customer word, not a receivable.
    assert.notInclude(related("accounts")[0] ?? [], "outstand")
    assert.include(related("accounts receivable")[0] ?? [], "outstand")
  })

  it("leaves handle words of multi-word partners out", () => {
    // "amount owed" gives "owe" (the stem of "owed"), not "amount"; "accounts receivable" gives no "account".
    const receivable = related("receivable")[0] ?? []
    assert.include(receivable, "owe")
    assert.notInclude(receivable, "amount")
    assert.notInclude(receivable, "account")
  })

  it("words outside the glossary relate to nothing, and the similarity is a 0.8 cosine", () => {
    assert.deepStrictEqual(related("sourdough bread"), [[], []])
    assert.closeTo(Glossary.similarity, (0.8 - 0.5) / (0.85 - 0.5), 1e-9)
    assert.isAtLeast(Glossary.groups.length, 60)
  })
})
