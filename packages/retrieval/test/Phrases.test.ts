import { assert, describe, it } from "@effect/vitest"
import * as Phrases from "../src/Phrases.ts"

const values = new Set(["footwear", "ios app", "cancelled", "network", "carrier", "widebody", "april 2024 hailstorm"])
const hints: Phrases.Hints = {
  isValue: (text) => values.has(text.toLowerCase()),
  isName: (text) => text.toLowerCase() === "carrier type"
}
const phrases = (q: string) => Phrases.extract(q, hints).map((p) => `${p.text}|${p.kind}`)

describe("Phrases", () => {
  it("splits at function words and marks group-bys", () => {
    assert.deepStrictEqual(phrases("What is the return rate for each brand?"), ["return rate|entity", "brand|group_by"])
    assert.deepStrictEqual(phrases("Sales per region across traffic sources"), ["Sales|entity", "region|group_by", "traffic sources|group_by"])
  })

  it("keeps of/on between content words and hyphenated words whole", () => {
    assert.deepStrictEqual(phrases("I want to draw our route network on a map."), ["route network on a map|entity"])
    assert.deepStrictEqual(phrases("Show me the month-by-month sales trend."), ["month-by-month sales trend|entity"])
  })

  it("finds time ranges and grains", () => {
    assert.deepStrictEqual(phrases("How much revenue did we bring in over the last twelve months?"), ["revenue|entity", "last twelve months|time"])
    assert.deepStrictEqual(phrases("Orders in Q3 2024 by month"), ["Orders|entity", "Q3 2024|time", "month|grain"])
    assert.deepStrictEqual(phrases("flights during March 2023"), ["flights|entity", "March 2023|time"])
  })

  it("reads weekdays as time, keeps a stored value that starts like a date whole, and splits at against", () => {
    assert.deepStrictEqual(phrases("late arrivals on Fridays"), ["late arrivals|entity", "Fridays|time"])
    assert.deepStrictEqual(phrases("claims from the April 2024 Hailstorm"), ["claims|entity", "April 2024 Hailstorm|filter"])
    assert.deepStrictEqual(phrases("claims from April 2024"), ["claims|entity", "April 2024|time"])
    assert.deepStrictEqual(phrases("earned premium against incurred losses"), ["earned premium|entity", "incurred losses|entity"])
  })

  it("splits stored values, capitalized names, codes and quoted text out as filters", () => {
    assert.deepStrictEqual(phrases("What share of iOS App orders end up cancelled?"), ["share|entity", "iOS App|filter", "orders|entity", "cancelled|filter"])
    assert.deepStrictEqual(phrases("flights from JFK to Denver"), ["flights|entity", "JFK|filter", "Denver|filter"])
    assert.deepStrictEqual(phrases('sales of "Outdoor Gear" items'), ["sales|entity", "Outdoor Gear|filter", "items|entity"])
    assert.deepStrictEqual(phrases("Which widebody aircraft fly most?"), ["widebody|filter", "aircraft fly|entity"])
  })

  it("does not split a lower-case value word out of a field name or the middle of a phrase", () => {
    assert.deepStrictEqual(phrases("average delay by carrier type"), ["average delay|entity", "carrier type|group_by"])
    assert.deepStrictEqual(phrases("our route network on a map"), ["route network on a map|entity"])
  })

  it("describes each phrase", () => {
    const [value] = Phrases.extract("Denver flights", { isValue: (t) => t === "Denver" })
    assert.strictEqual(value?.kind, "filter")
    assert.include(value?.description ?? "", "stored value")
    assert.deepStrictEqual(Phrases.extract("What is it?"), [])
  })
})
