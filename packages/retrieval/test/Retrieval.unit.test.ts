/**
 * The index, the scoring and the service over a small in-memory model and a tiny hand-made
 * word-vector table: value targets and their dedupe, lazy builds, value-first ranking, synonyms
 * through vectors, the cutoff and the anchor rule.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { SemanticRuntime } from "@modelgate/core"
import { Effect, Layer } from "effect"
import * as EntityIndex from "../src/EntityIndex.ts"
import * as Retrieval from "../src/Retrieval.ts"
import * as Scoring from "../src/Scoring.ts"
import * as Semantic from "../src/Semantic.ts"

type ModelEntity = SemanticRuntime.ModelEntity
const entity = (e: Partial<ModelEntity> & Pick<ModelEntity, "kind" | "source" | "name">): ModelEntity => ({
  path: [], dataType: "", doc: undefined, tags: [], ...e
})
const categoryDoc = "Merchandising category the item is shelved under."
const model: SemanticRuntime.ModelInfo = {
  modelPath: "shop.malloy",
  entities: [
    entity({ kind: "source", source: "products", name: "products", doc: "Catalog of items we sell." }),
    entity({ kind: "dimension", source: "products", name: "category", dataType: "string", doc: categoryDoc, tags: ["index_values"] }),
    entity({ kind: "dimension", source: "products", name: "product_name", dataType: "string", doc: "Title on the product page." }),
    entity({ kind: "source", source: "order_items", name: "order_items", doc: "One row per unit sold." }),
    entity({ kind: "measure", source: "order_items", name: "total_sales", dataType: "number", doc: "Sum of prices paid in USD." }),
    entity({ kind: "dimension", source: "order_items", name: "status", dataType: "string", doc: "Fulfilment state.", tags: ["index_values"] }),
    entity({ kind: "dimension", source: "order_items", name: "created_at", dataType: "timestamp" }),
    entity({ kind: "join", source: "order_items", name: "products", doc: "Catalog entry." }),
    entity({ kind: "dimension", source: "order_items", name: "category", path: ["products"], dataType: "string", doc: categoryDoc, tags: ["index_values"] }),
    entity({ kind: "dimension", source: "order_items", name: "product_name", path: ["products"], dataType: "string", doc: "Title on the product page." }),
    entity({ kind: "source", source: "carriers", name: "carriers", doc: "Operating carriers." }),
    entity({ kind: "dimension", source: "carriers", name: "carrier_name", dataType: "string", doc: "Marketing name of the carrier." }),
    entity({ kind: "measure", source: "order_items", name: "average_order_value", dataType: "number", doc: "Mean basket value in USD, over orders placed by shoppers." }),
    entity({ kind: "view", source: "order_items", name: "merch_report", doc: "Weekly report the buying team reads on Monday mornings.", fields: ["products.category", "total_sales"] })
  ]
}

const rowsFor = (query: string): Array<Record<string, unknown>> => {
  const row = (v: string, n: number) => ({ [EntityIndex.valueColumn]: v, [EntityIndex.countColumn]: n })
  if (query.includes("`category`")) return [row("Footwear", 30), row("Tops & Tees", 20)]
  if (query.includes("`status`")) return [row("Complete", 90), row("Cancelled", 10)]
  if (query.includes("`carrier_name`")) return [row("Cascade Air", 5)]
  // product_name: more distinct values than the auto cap.
  return Array.from({ length: EntityIndex.autoValueCap + 1 }, (_, i) => row(`Product ${i}`, 1))
}

const queries: Array<string> = []
const RuntimeLayer = SemanticRuntime.SemanticRuntime.layerMemoryWith({
  models: [model],
  run: (request) => {
    if (request._tag === "Custom") queries.push(request.query)
    return request._tag === "Custom" ? rowsFor(request.query) : []
  }
})

/** Four dimensions: revenue ≈ sale(s), airline ≈ carrier(s), everything else unrelated. */
const table: Record<string, ReadonlyArray<number>> = {
  revenue: [1, 0, 0, 0], sales: [0.95, 0.31, 0, 0], sale: [0.95, 0.31, 0, 0],
  airline: [0, 0, 1, 0], carrier: [0, 0, 0.96, 0.28], carriers: [0, 0, 0.96, 0.28],
  bread: [0, 0.2, 0, 0.98], recipe: [0, 0.25, 0, 0.97]
}
const vectors: Semantic.Vectors = {
  dimensions: 4,
  vector: (word) => {
    const v = table[word]
    if (v === undefined) return undefined
    const norm = Math.hypot(...v)
    return Float32Array.from(v.map((x) => x / norm))
  }
}

const TestLayer = Retrieval.layer({ vectors: Effect.succeed(vectors) }).pipe(Layer.provideMerge(RuntimeLayer))
const version: SemanticRuntime.VersionLocation = { organization: "o", environment: "e", package: "shop", version: "1", location: "o/e/shop/1" }
const target: Retrieval.Target = { project: "e", package: "shop", version }

describe("EntityIndex.valueTargets", () => {
  it("reads a field reached through several join paths once, and auto-indexes only own fields", () => {
    const { targets, fieldOf } = EntityIndex.valueTargets(EntityIndex.entitiesOf([model]))
    const names = targets.map((t) => [t.source, ...t.path, t.name].join("."))
    assert.deepStrictEqual(names.sort(), ["carriers.carrier_name", "order_items.status", "products.category", "products.product_name"])
    const category = targets.find((t) => t.name === "category")
    assert.strictEqual(category?.cap, EntityIndex.taggedValueCap)
    assert.strictEqual(targets.find((t) => t.name === "product_name")?.cap, EntityIndex.autoValueCap)
    // The joined copy (entity 8) shares the top-level field's values.
    assert.strictEqual(fieldOf.get(8), fieldOf.get(1))
    assert.include(EntityIndex.valueQuery({ field: 0, modelPath: "shop.malloy", tagged: true, cap: 10, source: "order_items", path: ["products"], name: "category" }), "`products`.`category`")
  })

  it("drops an untagged field with more distinct values than the cap", () => {
    const target = { field: 0, modelPath: "m", source: "s", path: [], name: "n", tagged: false, cap: 2 }
    const row = (v: string) => ({ [EntityIndex.valueColumn]: v, [EntityIndex.countColumn]: 1n })
    assert.deepStrictEqual(EntityIndex.valuesFromRows(target, [row("a"), row("b"), row("c")]), [])
    assert.deepStrictEqual(EntityIndex.valuesFromRows(target, [row("a"), row("b")]).map((v) => v.count), [1, 1])
    assert.strictEqual(EntityIndex.valuesFromRows({ ...target, tagged: true }, [row("a"), row("b"), row("c")]).length, 2)
  })
})

describe("Scoring", () => {
  const index = EntityIndex.make({
    entities: EntityIndex.entitiesOf([model]),
    fieldOf: EntityIndex.valueTargets(EntityIndex.entitiesOf([model])).fieldOf,
    values: [],
    vectors
  })
  const top = (text: string, kind: "entity" | "time" = "entity") =>
    Scoring.scorePhrase(index, { text, kind, description: "" }).map((s) => ({ ...s, name: `${index.entities[s.entity]?.source}.${index.entities[s.entity]?.name}` }))

  it("scores an exact name 1 with reason name, and a synonym by meaning", () => {
    const [exact] = top("total sales")
    assert.deepStrictEqual([exact?.name, exact?.score, exact?.reason], ["order_items.total_sales", 1, "name"])
    const [synonym] = top("revenue")
    assert.deepStrictEqual([synonym?.name, synonym?.reason], ["order_items.total_sales", "meaning"])
    assert.isAtLeast(synonym?.score ?? 0, Scoring.cutoff)
  })

  it("matches doc words", () => {
    const [doc] = top("shelved")
    assert.deepStrictEqual([doc?.name, doc?.reason], ["products.category", "doc"])
  })

  it("returns nothing under the cutoff", () => {
    assert.deepStrictEqual(top("sourdough bread recipe"), [])
  })

  it("scores only entities a phrase word reaches, with the same result as scoring all", () => {
    // Every entity listed under every term: no pruning at all.
    const everyone = Int32Array.from(index.entities.map((_, id) => id))
    const unpruned = { ...index, termEntities: index.termEntities.map(() => everyone) }
    for (const text of ["total sales", "revenue", "airline", "shelved", "category of products", "carriers bread", "name"]) {
      const phrase = { text, kind: "entity" as const, description: "" }
      assert.deepStrictEqual(Scoring.scorePhrase(index, phrase), Scoring.scorePhrase(unpruned, phrase), text)
    }
    const carrier = index.vocabulary.ids.get("carrier") ?? -1
    assert.deepStrictEqual(
      Array.from(index.termEntities[carrier] ?? []).map((id) => index.entities[id]?.name),
      ["carriers", "carrier_name"]
    )
  })

  it("reads an acronym as the initials of a field's name", () => {
    const [aov] = top("AOV")
    assert.deepStrictEqual([aov?.name, aov?.reason], ["order_items.average_order_value", "name"])
    assert.strictEqual(aov?.score, Scoring.weights.acronym)
    // Lower-case, it is just an unknown word.
    assert.deepStrictEqual(top("aov"), [])
  })

  it("gives time phrases the date and timestamp dimensions", () => {
    assert.deepStrictEqual(top("last winter", "time").map((s) => s.name), ["order_items.created_at"])
  })
})

layer(TestLayer)("Retrieval", (it) => {
  it.effect("builds lazily on the first search and ranks the dimension holding a named value first", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const result = yield* retrieval.search({ question: "How did Footwear sell?", targets: [target] })
      assert.isAbove(queries.length, 0)
      const products = result.sources.find((s) => s.source_name === "products")
      const phrase = products?.phrases.find((p) => p.phrase === "Footwear")
      assert.deepStrictEqual(phrase?.entities[0]?.name, "category")
      assert.deepStrictEqual(phrase?.entities[0]?.match_reason, "value")
      assert.deepStrictEqual(phrase?.entities[0]?.values, ["Footwear", "Tops & Tees"])
      assert.strictEqual(products?.version_id, "1")
      const joined = result.sources.find((s) => s.source_name === "order_items")?.phrases[0]?.entities[0]
      assert.deepStrictEqual([joined?.name, joined?.match_reason], ["products.category", "value"])
    }))

  it("does not rebuild an index it holds, and rebuilds after drop", () => {
    return Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      yield* retrieval.search({ question: "total sales", targets: [target] })
      const before = queries.length
      yield* retrieval.search({ question: "status", targets: [target] })
      assert.strictEqual(queries.length, before)
      yield* retrieval.drop(version)
      const summary = yield* retrieval.build(version)
      assert.strictEqual(queries.length, before + 4)
      assert.strictEqual(summary.entities, model.entities.length)
      // category 2 + status 2 + carrier_name 1; product_name is over the auto cap.
      assert.strictEqual(summary.values, 5)
    })
  })

  it("finds a synonym, caps entities per phrase, and answers an unrelated question with nothing", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const revenue = yield* retrieval.search({ question: "revenue by airline", targets: [target], limit: 1 })
      const names = revenue.sources.flatMap((s) => s.phrases.map((p) => `${p.phrase}:${s.source_name}.${p.entities[0]?.name}`))
      assert.include(names, "revenue:order_items.total_sales")
      assert.include(names, "airline:carriers.carrier_name")
      assert.isTrue(revenue.sources.every((s) => s.phrases.every((p) => p.entities.length <= 1)))
      const bread = yield* retrieval.search({ question: "What's the best recipe for sourdough bread?", targets: [target] })
      assert.deepStrictEqual(bread.sources, [])
    }))

  it("needs an anchor: a lower-case value word alone finds nothing", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const alone = yield* retrieval.search({ question: "is it cancelled tomorrow?", targets: [target] })
      assert.deepStrictEqual(alone.sources, [])
      const anchored = yield* retrieval.search({ question: "total sales of cancelled items", targets: [target] })
      const status = anchored.sources.flatMap((s) => s.phrases).find((p) => p.phrase === "cancelled")?.entities[0]
      assert.deepStrictEqual([status?.name, status?.values?.[0]], ["status", "Cancelled"])
    }))

  it("needs most of the question known: a shared generic word does not anchor", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const known = yield* retrieval.search({ question: "total sales", targets: [target] })
      assert.isAbove(known.sources.length, 0)
      const offTopic = yield* retrieval.search({ question: "What is the total, syllables and haiku?", targets: [target] })
      assert.deepStrictEqual(offTopic.sources, [])
    }))

  it("offers a view for two phrases matching two of its fields, after the fields", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const result = yield* retrieval.search({ question: "total sales by category", targets: [target] })
      const sales = result.sources.find((s) => s.source_name === "order_items")?.phrases.find((p) => p.phrase === "total sales")
      assert.deepStrictEqual(sales?.entities.slice(0, 2).map((e) => e.name), ["total_sales", "merch_report"])
      const alone = yield* retrieval.search({ question: "total sales", targets: [target] })
      assert.isFalse(alone.sources.some((s) => s.phrases.some((p) => p.entities.some((e) => e.name === "merch_report"))))
    }))

  it("narrows to a model and source", () =>
    Effect.gen(function*() {
      const retrieval = yield* Retrieval.Retrieval
      const result = yield* retrieval.search({ question: "category", targets: [{ ...target, modelUri: "shop.malloy", sourceName: "products" }] })
      assert.deepStrictEqual(result.sources.map((s) => s.source_name), ["products"])
      const none = yield* retrieval.search({ question: "category", targets: [{ ...target, modelUri: "other.malloy" }] })
      assert.deepStrictEqual(none.sources, [])
    }))
})

describe("Retrieval across packages", () => {
  const shop: SemanticRuntime.ModelInfo = {
    modelPath: "shop.malloy",
    entities: [
      entity({ kind: "source", source: "customers", name: "customers", doc: "People who bought from the store." }),
      entity({ kind: "dimension", source: "customers", name: "state", dataType: "string", doc: "US state of the shopper's address." }),
      entity({ kind: "measure", source: "customers", name: "customer_count", dataType: "number", doc: "Number of shoppers." })
    ]
  }
  const insure: SemanticRuntime.ModelInfo = {
    modelPath: "insure.malloy",
    entities: [
      entity({ kind: "source", source: "claims", name: "claims", doc: "Insurance claims." }),
      entity({ kind: "dimension", source: "claims", name: "state", dataType: "string", doc: "US state of the insured property." }),
      entity({ kind: "measure", source: "claims", name: "hail_losses", dataType: "number", doc: "Paid losses from hail damage." })
    ]
  }
  const byPackage = Layer.succeed(SemanticRuntime.SemanticRuntime, SemanticRuntime.SemanticRuntime.of({
    describe: (version) => Effect.succeed(version.package === "shop" ? [shop] : [insure]),
    execute: () => Effect.succeed({ rows: [], totalRows: 0, truncated: false, executionTimeMillis: 0, sql: undefined })
  }))
  const at = (pkg: string): Retrieval.Target => ({
    project: "e",
    package: pkg,
    version: { organization: "o", environment: "e", package: pkg, version: "1", location: `o/e/${pkg}/1` }
  })

  layer(Retrieval.layer({ vectors: Effect.succeed(undefined) }).pipe(Layer.provideMerge(byPackage)))((it) => {
    it.effect("ranks a generic phrase's entity first in the package that also answers the rest of the question", () =>
      Effect.gen(function*() {
        const retrieval = yield* Retrieval.Retrieval
        const result = yield* retrieval.search({ question: "hail losses by state", targets: [at("shop"), at("insure")] })
        const stateIn = (pkg: string) =>
          result.sources.find((s) => s.package_name === pkg)?.phrases.find((p) => p.phrase === "state")?.entities.find((e) => e.name === "state")?.score
        const insured = stateIn("insure")
        const shopped = stateIn("shop")
        assert.isDefined(insured)
        assert.isDefined(shopped)
        // Both name `state` exactly; only the insurance package also knows "hail losses".
        assert.isAbove(insured ?? 0, shopped ?? 0)
        assert.strictEqual(result.sources[0]?.package_name, "insure")
      }))
  })
})
