/**
 * The Malloy runtime over the demo packages (ecommerce, flights) kept in an in-memory package
 * store: describe finds sources, fields, joins, docs and tags; execute runs views and custom
 * queries with numbers checked against DuckDB on the parquet files; the sandbox refuses queries
 * that try to leave the package.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { assert, describe, it, layer } from "@effect/vitest"
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Effect, Layer } from "effect"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, sep } from "node:path"
import * as Runtime from "../src/Runtime.ts"

const fixtures = join(import.meta.dirname, "../../../examples/server/demo/packages")

const readPackage = (name: string): PackageStore.PackageFiles => {
  const root = join(fixtures, name)
  const files = new Map<string, Uint8Array>()
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(root, path).split(sep).join("/"), readFileSync(path))
  }
  return files
}

const version = (pkg: string): SemanticRuntime.VersionLocation => ({
  organization: "acme",
  environment: "demo",
  package: pkg,
  version: "1.0.0",
  location: `acme/demo/${pkg}/1.0.0`
})
const ecommerce = version("ecommerce")
const flights = version("flights")
const evil = version("evil")

/** Counts compilations per model, and of queries per model and text. */
const compilations = new Map<string, number>()
const preparations = new Map<string, number>()

const seeded = Layer.effectDiscard(Effect.gen(function*() {
  const store = yield* PackageStore.PackageStore
  yield* store.put(ecommerce.location, readPackage("ecommerce"))
  yield* store.put(flights.location, readPackage("flights"))
  yield* store.put(evil.location, new Map([
    ["evil.malloy", new TextEncoder().encode("source: secrets is duckdb.sql(\"\"\"select * from read_csv('/etc/passwd')\"\"\")\n")]
  ]))
}))

const TestLayer = Layer.mergeAll(
  Runtime.layer({
    cacheDir: mkdtempSync(join(tmpdir(), "modelgate-malloy-test-")),
    maxRowLimit: 50,
    queryTimeoutMillis: 5_000,
    onCompile: (location, modelPath) => {
      const key = `${location}:${modelPath}`
      compilations.set(key, (compilations.get(key) ?? 0) + 1)
    },
    onPrepare: (location, modelPath, query) => {
      const key = `${location}:${modelPath}:${query}`
      preparations.set(key, (preparations.get(key) ?? 0) + 1)
    }
  }),
  seeded
).pipe(Layer.provideMerge(Layer.merge(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory)))

/** Answers a SQL query directly with DuckDB on a package's parquet files. */
const duck = (sql: string) =>
  Effect.promise(async () => {
    const instance = await DuckDBInstance.create(":memory:")
    const connection = await instance.connect()
    try {
      const reader = await connection.runAndReadAll(sql)
      return reader.getRowObjectsJS()
    } finally {
      connection.closeSync()
      instance.closeSync()
    }
  })

const scalar = (sql: string) =>
  Effect.map(duck(sql), (rows) => Number(Object.values(rows[0] ?? {})[0]))

const file = (pkg: string, table: string) => `'${join(fixtures, pkg, "data", `${table}.parquet`)}'`

const entity = (models: ReadonlyArray<SemanticRuntime.ModelInfo>, source: string, path: ReadonlyArray<string>, name: string) =>
  models.flatMap((model) => model.entities).find((e) =>
    e.source === source && e.name === name && e.path.join(".") === path.join(".")
  )

layer(TestLayer, { timeout: 120_000 })("Malloy Runtime", (it) => {
  describe("describe", () => {
    it.effect("lists sources, measures, views, joins, docs and tags", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const eco = yield* runtime.describe(ecommerce)
        assert.deepStrictEqual(eco.map((model) => model.modelPath), ["ecommerce.malloy"])

        const totalSales = entity(eco, "order_items", [], "total_sales")
        assert.strictEqual(totalSales?.kind, "measure")
        assert.strictEqual(totalSales?.dataType, "number")
        assert.include(totalSales?.tags ?? [], "currency")

        const category = entity(eco, "products", [], "category")
        assert.strictEqual(category?.kind, "dimension")
        assert.strictEqual(category?.dataType, "string")
        assert.strictEqual(category?.doc, "Merchandising category the item is shelved under on the storefront.")
        assert.include(category?.tags ?? [], "index_values")
        assert.notInclude(category?.tags ?? [], "doc")

        const joined = entity(eco, "order_items", ["products"], "category")
        assert.strictEqual(joined?.kind, "dimension")
        assert.strictEqual(joined?.doc, category?.doc)
        assert.strictEqual(entity(eco, "order_items", [], "products")?.kind, "join")
        assert.strictEqual(entity(eco, "order_items", [], "products")?.doc, "Catalog entry of the unit sold.")
        assert.strictEqual(entity(eco, "order_items", ["products", "inventory_items"], "distribution_centers")?.kind, "join")

        const source = entity(eco, "order_items", [], "order_items")
        assert.strictEqual(source?.kind, "source")
        assert.match(source?.doc ?? "", /^Sales fact table/)

        const query = entity(eco, "", [], "category_scorecard_2024")
        assert.strictEqual(query?.kind, "query")
        assert.strictEqual(query?.doc, "Category scorecard for calendar year 2024: sales, margin, units and returns.")

        const fl = yield* runtime.describe(flights)
        const byCarrier = entity(fl, "flights", [], "by_carrier")
        assert.strictEqual(byCarrier?.kind, "view")
        assert.strictEqual(byCarrier?.dataType, "")
        // What a view shows: its group-bys, aggregates and nests, by path.
        assert.deepStrictEqual(byCarrier?.fields, ["carriers.carrier_name", "flight_count", "on_time_rate", "avg_arrival_delay", "cancellation_rate"])
        assert.includeMembers([...(entity(fl, "flights", [], "by_origin_state")?.fields ?? [])], ["origin_state", "flight_count"])
        assert.includeMembers([...(entity(fl, "", [], "least_punctual_routes")?.fields ?? [])], ["route", "flight_count", "on_time_rate"])
        assert.strictEqual(entity(fl, "flights", [], "departure_time")?.dataType, "timestamp")
        assert.strictEqual(entity(fl, "flights", [], "is_cancelled")?.dataType, "boolean")
        assert.strictEqual(entity(fl, "flights", ["origin"], "city")?.kind, "dimension")
        // A renamed primary key: Malloy 0.0.431 reports its doc twice.
        assert.strictEqual(
          entity(fl, "airports", [], "code")?.doc,
          "Three-letter IATA location identifier printed on bag tags and boarding passes."
        )
        assert.deepStrictEqual(entity(fl, "airports", [], "code")?.tags, ["index_values"])
        assert.strictEqual(entity(fl, "flights", [], "code"), undefined)
      }))
  })

  describe("execute", () => {
    it.effect("runs a view (Named) with the numbers DuckDB gives", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const result = yield* runtime.execute(
          flights,
          { _tag: "Named", modelPath: "flights.malloy", sourceName: "flights", queryName: "by_carrier" },
          { rowLimit: 100 }
        )
        const expected = yield* scalar(`select count(distinct carrier_code) from ${file("flights", "flights")}`)
        const total = yield* scalar(`select count(*) from ${file("flights", "flights")}`)
        assert.strictEqual(result.rows.length, expected)
        assert.strictEqual(result.truncated, false)
        assert.strictEqual(result.rows.reduce((sum, row) => sum + Number(row["flight_count"]), 0), total)
        assert.match(result.sql ?? "", /SELECT/i)
      }))

    it.effect("runs a top-level named query", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const result = yield* runtime.execute(
          ecommerce,
          { _tag: "Named", modelPath: "ecommerce.malloy", sourceName: "", queryName: "cyber_weekend_2024_bestsellers" },
          { rowLimit: 100 }
        )
        assert.strictEqual(result.rows.length, 15)
        assert.isDefined(result.rows[0]?.["total_sales"])
      }))

    it.effect("runs custom queries on both packages", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const count = yield* runtime.execute(
          flights,
          { _tag: "Custom", modelPath: "flights.malloy", query: "run: flights -> { aggregate: flight_count }" },
          { rowLimit: 10 }
        )
        assert.strictEqual(Number(count.rows[0]?.["flight_count"]), yield* scalar(`select count(*) from ${file("flights", "flights")}`))

        const sales = yield* runtime.execute(
          ecommerce,
          { _tag: "Custom", modelPath: "ecommerce.malloy", query: "order_items -> { aggregate: total_sales, item_count }" },
          { rowLimit: 10 }
        )
        const expected = yield* scalar(
          `select sum(oi.amount_usd) from ${file("ecommerce", "order_items")} oi
           join ${file("ecommerce", "orders")} o on oi.order_id = o.order_id where o.order_status != 'Cancelled'`
        )
        assert.closeTo(Number(sales.rows[0]?.["total_sales"]), expected, 0.01)
        assert.strictEqual(Number(sales.rows[0]?.["item_count"]), yield* scalar(`select count(*) from ${file("ecommerce", "order_items")}`))
      }))

    it.effect("reports truncation at the requested and at the maximum row limit", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const query = "run: products -> { group_by: product_name }"
        const request = { _tag: "Custom", modelPath: "ecommerce.malloy", query } as const
        const five = yield* runtime.execute(ecommerce, request, { rowLimit: 5 })
        assert.strictEqual(five.rows.length, 5)
        assert.isTrue(five.truncated)
        assert.isAbove(five.totalRows, 5)
        const capped = yield* runtime.execute(ecommerce, request, { rowLimit: 1_000 })
        assert.strictEqual(capped.rows.length, 50)
        assert.isTrue(capped.truncated)
        const all = yield* runtime.execute(ecommerce, { ...request, query: "run: distribution_centers -> { group_by: center_name }" }, {
          rowLimit: 8
        })
        assert.strictEqual(all.rows.length, 8)
        assert.isFalse(all.truncated)
      }))

    it.effect("a compile error is QueryFailed compile with Malloy's message", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const error = yield* Effect.flip(runtime.execute(
          flights,
          { _tag: "Custom", modelPath: "flights.malloy", query: "run: flights -> { aggregate: no_such_measure }" },
          { rowLimit: 10 }
        ))
        assert.strictEqual(error._tag, "QueryFailed")
        assert.strictEqual(error._tag === "QueryFailed" ? error.reason : undefined, "compile")
        assert.include(error.message, "no_such_measure")
        assert.notInclude(error.message, "    at ")
      }))

    it.effect("an unknown view is QueryFailed not_found", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const error = yield* Effect.flip(runtime.execute(
          flights,
          { _tag: "Named", modelPath: "flights.malloy", sourceName: "flights", queryName: "nope" },
          { rowLimit: 10 }
        ))
        assert.strictEqual(error._tag === "QueryFailed" ? error.reason : undefined, "not_found")
      }))
  })

  describe("sandbox", () => {
    const refused = [
      ["read_csv in a sql: block", "source: x is duckdb.sql(\"\"\"select * from read_csv('/etc/passwd')\"\"\")\nrun: x -> { select: * }"],
      ["duckdb.table on /etc/passwd", "run: duckdb.table('/etc/passwd') -> { select: * }"],
      ["an import", "import \"../flights/flights.malloy\"\nrun: flights -> { aggregate: flight_count }"],
      ["a sql: statement", "sql: s is { connection: \"duckdb\" select: \"\"\"select 1\"\"\" }"],
      ["a URL table", "run: duckdb.table('https://example.com/data.parquet') -> { select: * }"],
      ["a raw SQL function", "run: flights -> { group_by: x is read_text!('/etc/passwd') }"]
    ] as const
    for (const [name, query] of refused) {
      it.effect(`refuses ${name}`, () =>
        Effect.gen(function*() {
          const runtime = yield* SemanticRuntime.SemanticRuntime
          const error = yield* Effect.flip(runtime.execute(flights, { _tag: "Custom", modelPath: "flights.malloy", query }, {
            rowLimit: 10
          }))
          assert.strictEqual(error._tag === "QueryFailed" ? error.reason : undefined, "compile")
          assert.match(error.message, /^Query refused: /)
        }))
    }

    it.effect("a keyword inside a string is not refused", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const result = yield* runtime.execute(
          flights,
          { _tag: "Custom", modelPath: "flights.malloy", query: "run: flights -> { where: route = 'import sql: x.table(' aggregate: flight_count }" },
          { rowLimit: 10 }
        )
        assert.strictEqual(Number(result.rows[0]?.["flight_count"]), 0)
      }))

    it.effect("DuckDB itself refuses a model reading files outside the package, and nothing breaks", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        // The pre-check covers custom queries only; a model's own text reaches DuckDB's sandbox.
        const error = yield* Effect.flip(runtime.describe(evil))
        assert.strictEqual(error._tag, "ModelLoadFailed")
        assert.match(error.message, /Permission Error|disabled/)
        const models = yield* runtime.describe(flights)
        assert.isAbove(models[0]?.entities.length ?? 0, 0)
        const after = yield* runtime.execute(
          flights,
          { _tag: "Custom", modelPath: "flights.malloy", query: "run: airports -> { aggregate: airport_count }" },
          { rowLimit: 10 }
        )
        assert.strictEqual(Number(after.rows[0]?.["airport_count"]), yield* scalar(`select count(*) from ${file("flights", "airports")}`))
      }))
  })

  it.effect("each model is compiled once", () =>
    Effect.gen(function*() {
      const runtime = yield* SemanticRuntime.SemanticRuntime
      yield* runtime.describe(flights)
      yield* runtime.describe(ecommerce)
      assert.strictEqual(compilations.get(`${flights.location}:flights.malloy`), 1)
      assert.strictEqual(compilations.get(`${ecommerce.location}:ecommerce.malloy`), 1)
    }))

  it.effect("a query text is compiled once per model; each run applies its own row limit", () =>
    Effect.gen(function*() {
      const runtime = yield* SemanticRuntime.SemanticRuntime
      const query = "run: flights -> { group_by: carriers.carrier_name; aggregate: flight_count }"
      const request = { _tag: "Custom", modelPath: "flights.malloy", query } as const
      const wide = yield* runtime.execute(flights, request, { rowLimit: 20 })
      const narrow = yield* runtime.execute(flights, request, { rowLimit: 2 })
      const again = yield* runtime.execute(flights, request, { rowLimit: 20 })
      assert.strictEqual(preparations.get(`${flights.location}:flights.malloy:${query}`), 1)
      assert.isAbove(wide.rows.length, 2)
      assert.isFalse(wide.truncated)
      assert.strictEqual(narrow.rows.length, 2)
      assert.isTrue(narrow.truncated)
      assert.deepStrictEqual(again.rows, wide.rows)
      // Another text is another compile.
      yield* runtime.execute(flights, { ...request, query: `${query}; ` }, { rowLimit: 5 }).pipe(Effect.ignore)
      assert.strictEqual(preparations.get(`${flights.location}:flights.malloy:${query}`), 1)
    }))
})

const SlowLayer = Layer.mergeAll(
  Runtime.layer({ cacheDir: mkdtempSync(join(tmpdir(), "modelgate-malloy-test-")), queryTimeoutMillis: 300 }),
  seeded
).pipe(Layer.provideMerge(Layer.merge(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory)))

describe("Malloy Runtime timeout", () => {
  it.live("a query running past the timeout is interrupted and fails with reason timeout", () =>
    Effect.gen(function*() {
      const runtime = yield* SemanticRuntime.SemanticRuntime
      const request = {
        _tag: "Custom",
        modelPath: "flights.malloy",
        // 50,000 x 50,000 x 50,000 legs: far more work than the timeout allows.
        query: "run: flights extend { join_cross: a is flights join_cross: b is flights } -> { aggregate: n is count(a.flight_id + b.flight_id) }"
      } as const
      const error = yield* Effect.flip(runtime.execute(flights, request, { rowLimit: 10 }))
      assert.strictEqual(error._tag === "QueryFailed" ? error.reason : undefined, "timeout")
      // The connection still answers afterwards.
      const after = yield* runtime.execute(flights, { ...request, query: "run: carriers -> { aggregate: carrier_count }" }, { rowLimit: 10 })
      assert.strictEqual(Number(after.rows[0]?.["carrier_count"]), yield* scalar(`select count(*) from ${file("flights", "carriers")}`))
    }).pipe(Effect.provide(SlowLayer)))
})
