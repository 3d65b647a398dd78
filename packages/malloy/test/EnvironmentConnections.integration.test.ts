/**
 * Models reading the connections of their environment by name, on the machine's PostgreSQL (a
 * fresh scratch database per run, two in fact: a changed database name must be noticed) and
 * MariaDB (a table with a unique name in `test`): describe and execute views and custom queries,
 * recompilation when a connection's fingerprint changes, drivers closed when replaced and with
 * the layer, clear failures for unknown names and types, and the custom-query guard on every
 * connection.
 */
import { assert, describe, layer } from "@effect/vitest"
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Context, Effect, Layer, Random, Schema } from "effect"
import mysql from "mysql2/promise"
import { mkdtempSync } from "node:fs"
import { registerHooks } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Runtime from "../src/Runtime.ts"

// vitest.config.ts starts the workers with `--conditions import`, under which node-postgres's
// `require("pg-pool")` gets pg-pool's ES module wrapper instead of its CommonJS class. Plain Node
// (the server) never sets that condition; here pg-pool alone is resolved without it.
registerHooks({
  resolve: (specifier, context, nextResolve) =>
    nextResolve(
      specifier,
      specifier === "pg-pool" ? { ...context, conditions: context.conditions.filter((c) => c !== "import") } : context
    )
})

const organization = "acme"
const environment = "demo"

const version = (pkg: string): SemanticRuntime.VersionLocation => ({
  organization,
  environment,
  package: pkg,
  version: "1.0.0",
  location: `${organization}/${environment}/${pkg}/1.0.0`
})
const shop = version("shop")
const catalog = version("catalog")
const unknown = version("unknown")
const unsupported = version("unsupported")
const own = version("own")

/** Compilations per location and model, and closed drivers by connection name, in order. */
const compilations = new Map<string, number>()
const compiledCount = (v: SemanticRuntime.VersionLocation, modelPath: string) => compilations.get(`${v.location}:${modelPath}`) ?? 0
const closed: Array<string> = []

/** Runs statements on the machine's PostgreSQL, in database `database`. */
const postgres = (database: string, statements: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const { PostgresConnection } = await import("@malloydata/db-postgres")
    const connection = new PostgresConnection({ name: "fixture", host: "127.0.0.1", port: 5432, username: "postgres", databaseName: database })
    for (const statement of statements) await connection.runSQL(statement)
    await connection.close()
  })

/** Runs statements on the machine's MariaDB, in database `test`. */
const mariadb = (statements: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const connection = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root", database: "test" })
    try {
      for (const statement of statements) await connection.query(statement)
    } finally {
      await connection.end()
    }
  })

/** Two scratch databases with the same tables and different rows, dropped (with their sessions) at the end. */
const scratch = Effect.acquireRelease(
  Effect.gen(function*() {
    const suffix = `${Date.now().toString(36)}_${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
    const first = `modelgate_malloy_${suffix}_a`
    const second = `modelgate_malloy_${suffix}_b`
    const table = `modelgate_products_${suffix}`
    yield* postgres("postgres", [`CREATE DATABASE ${first}`, `CREATE DATABASE ${second}`])
    const schema = [
      "CREATE TABLE customers (id int primary key, name text not null)",
      "CREATE TABLE orders (id int primary key, customer_id int not null, amount numeric(10, 2) not null)"
    ]
    yield* postgres(first, [
      ...schema,
      "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')",
      "INSERT INTO orders VALUES (1, 1, 10.50), (2, 1, 5.25), (3, 2, 7.00)"
    ])
    yield* postgres(second, [...schema, "INSERT INTO customers VALUES (1, 'Linus')", "INSERT INTO orders VALUES (1, 1, 100.00)"])
    yield* mariadb([
      `CREATE TABLE ${table} (id int primary key, name varchar(20) not null, price decimal(6, 2) not null)`,
      `INSERT INTO ${table} VALUES (1, 'pen', 1.50), (2, 'ink', 3.00), (3, 'pad', 2.00)`
    ])
    return { first, second, table }
  }),
  ({ first, second, table }) =>
    Effect.andThen(
      postgres("postgres", [`DROP DATABASE IF EXISTS ${first} WITH (FORCE)`, `DROP DATABASE IF EXISTS ${second} WITH (FORCE)`]),
      mariadb([`DROP TABLE IF EXISTS ${table}`])
    )
)

class Fixture extends Context.Service<Fixture, { readonly first: string; readonly second: string; readonly table: string }>()(
  "test/Fixture"
) {}

const record = (settings: unknown) =>
  Schema.decodeUnknownEffect(ConnectionRepo.ConnectionRecord)({
    organization,
    environment,
    settings,
    indexingStatus: "UNKNOWN",
    indexingStatusLastUpdated: null,
    indexingProgress: null,
    createdAt: "2025-01-01T00:00:00.000Z",
    updatedAt: "2025-01-01T00:00:00.000Z",
    revision: 0
  }).pipe(Effect.orDie)

const text = (value: string) => new TextEncoder().encode(value)

const seeded = Layer.effectDiscard(Effect.gen(function*() {
  const { first, table } = yield* Fixture
  const repo = yield* ConnectionRepo.ConnectionRepo
  yield* repo.insert(yield* record({
    name: "my_pg",
    type: "postgres",
    postgresConnection: { host: "127.0.0.1", port: 5432, databaseName: first, userName: "postgres" }
  }))
  yield* repo.insert(yield* record({
    name: "my_maria",
    type: "mysql",
    mysqlConnection: { host: "127.0.0.1", port: 3306, database: "test", user: "root" }
  }))
  yield* repo.insert(yield* record({ name: "warehouse", type: "bigquery", bigqueryConnection: { defaultProjectId: "p" } }))
  // Shadowed: the package's own sandboxed DuckDB keeps the name.
  yield* repo.insert(yield* record({ name: "duckdb", type: "bigquery", bigqueryConnection: { defaultProjectId: "p" } }))

  const store = yield* PackageStore.PackageStore
  yield* store.put(shop.location, new Map([["shop.malloy", text(`
source: customers is my_pg.table('public.customers') extend {
  primary_key: id
}

source: orders is my_pg.table('public.orders') extend {
  join_one: customers with customer_id
  measure:
    order_count is count()
    revenue is amount.sum()
  view: by_customer is {
    group_by: customers.name
    aggregate: order_count, revenue
    order_by: name
  }
}
`)]]))
  yield* store.put(catalog.location, new Map([["catalog.malloy", text(`
source: products is my_maria.table('test.${table}') extend {
  measure: product_count is count()
  view: by_name is {
    group_by: name
    aggregate: product_count, total_price is price.sum()
    order_by: name
  }
}
`)]]))
  yield* store.put(unknown.location, new Map([["unknown.malloy", text("source: lost is nowhere.table('public.orders')\n")]]))
  yield* store.put(unsupported.location, new Map([["unsupported.malloy", text("source: w is warehouse.table('ds.events')\n")]]))
  yield* store.put(own.location, new Map([["own.malloy", text("source: answer is duckdb.sql(\"\"\"select 42 as answer\"\"\")\n")]]))
}))

const options = (onClose: (name: string) => void): Runtime.Options => ({
  cacheDir: mkdtempSync(join(tmpdir(), "modelgate-malloy-env-")),
  queryTimeoutMillis: 20_000,
  connectTimeoutMillis: 5_000,
  onCompile: (location, modelPath) => {
    const key = `${location}:${modelPath}`
    compilations.set(key, (compilations.get(key) ?? 0) + 1)
  },
  onConnectionClose: onClose
})

const TestLayer = Layer.mergeAll(Runtime.layer(options((name) => closed.push(name))), seeded).pipe(
  Layer.provideMerge(Layer.mergeAll(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory)),
  Layer.provideMerge(Layer.effect(Fixture, scratch))
)

const named = (modelPath: string, sourceName: string, queryName: string) => ({ _tag: "Named", modelPath, sourceName, queryName }) as const
const custom = (modelPath: string, query: string) => ({ _tag: "Custom", modelPath, query }) as const

const entity = (models: ReadonlyArray<SemanticRuntime.ModelInfo>, source: string, path: ReadonlyArray<string>, name: string) =>
  models.flatMap((model) => model.entities).find((e) => e.source === source && e.name === name && e.path.join(".") === path.join("."))

/** Points `my_pg` at another database (a fingerprint change) or changes only its password (none). */
const updatePostgres = (change: { readonly databaseName?: string; readonly password?: string }) =>
  Effect.gen(function*() {
    const repo = yield* ConnectionRepo.ConnectionRepo
    const current = yield* repo.get({ organization, environment, name: "my_pg" })
    yield* repo.save({
      ...current,
      settings: { ...current.settings, postgresConnection: { ...current.settings.postgresConnection, ...change } }
    })
  }).pipe(Effect.orDie)

layer(TestLayer, { timeout: 120_000 })("Malloy Runtime with environment connections", (it) => {
  describe("describe and execute", () => {
    it.effect("describes a model over PostgreSQL tables read by connection name, with its join", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const models = yield* runtime.describe(shop)
        assert.strictEqual(entity(models, "orders", [], "revenue")?.kind, "measure")
        assert.strictEqual(entity(models, "orders", [], "customers")?.kind, "join")
        assert.strictEqual(entity(models, "orders", ["customers"], "name")?.dataType, "string")
        assert.strictEqual(entity(models, "orders", [], "by_customer")?.kind, "view")
      }))

    it.effect("runs a view and a custom query on PostgreSQL", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const view = yield* runtime.execute(shop, named("shop.malloy", "orders", "by_customer"), { rowLimit: 10 })
        assert.deepStrictEqual(
          view.rows.map((row) => [row["name"], Number(row["order_count"]), Number(row["revenue"])]),
          [["Ada", 2, 15.75], ["Grace", 1, 7]]
        )
        assert.match(view.sql ?? "", /customers/)
        const total = yield* runtime.execute(shop, custom("shop.malloy", "orders -> { aggregate: revenue, order_count }"), { rowLimit: 10 })
        assert.strictEqual(Number(total.rows[0]?.["revenue"]), 22.75)
        assert.strictEqual(Number(total.rows[0]?.["order_count"]), 3)
      }))

    it.effect("describes and runs a model over a MariaDB table", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const models = yield* runtime.describe(catalog)
        assert.strictEqual(entity(models, "products", [], "price")?.dataType, "number")
        const view = yield* runtime.execute(catalog, named("catalog.malloy", "products", "by_name"), { rowLimit: 2 })
        assert.deepStrictEqual(view.rows.map((row) => [row["name"], Number(row["total_price"])]), [["ink", 3], ["pad", 2]])
        assert.isTrue(view.truncated)
        const count = yield* runtime.execute(catalog, custom("catalog.malloy", "run: products -> { aggregate: product_count }"), {
          rowLimit: 10
        })
        assert.strictEqual(Number(count.rows[0]?.["product_count"]), 3)
      }))

    it.effect("the package's own duckdb wins over an environment connection of that name", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const result = yield* runtime.execute(own, custom("own.malloy", "answer -> { group_by: answer }"), { rowLimit: 10 })
        assert.strictEqual(Number(result.rows[0]?.["answer"]), 42)
      }))
  })

  describe("failures", () => {
    it.effect("an unknown connection name is ModelLoadFailed naming it and the environment", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const error = yield* Effect.flip(runtime.describe(unknown))
        assert.strictEqual(error._tag, "ModelLoadFailed")
        assert.include(error.message, "no connection named nowhere in environment demo")
        const failed = yield* Effect.flip(runtime.execute(unknown, custom("unknown.malloy", "lost -> { select: * }"), { rowLimit: 1 }))
        assert.strictEqual(failed._tag, "ModelLoadFailed")
        assert.include(failed.message, "nowhere")
      }))

    it.effect("a connection type without a driver is ModelLoadFailed naming the connection and its type", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const error = yield* Effect.flip(runtime.describe(unsupported))
        assert.strictEqual(error._tag, "ModelLoadFailed")
        assert.include(error.message, "connection warehouse is of type bigquery: no driver for bigquery in this build")
      }))

    const refused = [
      ["raw SQL on a PostgreSQL connection", "run: my_pg.sql(\"\"\"select * from pg_shadow\"\"\") -> { select: * }"],
      ["a table of a PostgreSQL connection", "run: my_pg.table('pg_catalog.pg_authid') -> { select: * }"],
      ["raw SQL on a MariaDB connection", "run: my_maria.sql('select * from mysql.user') -> { select: * }"],
      ["a sql: block naming a connection", "sql: s is { connection: \"my_pg\" select: \"\"\"select 1\"\"\" }"],
      ["an import", "import \"../catalog/catalog.malloy\"\nrun: orders -> { aggregate: order_count }"],
      ["a raw SQL function", "run: orders -> { group_by: x is pg_read_file!('/etc/passwd') }"]
    ] as const
    for (const [name, query] of refused) {
      it.effect(`a custom query with ${name} is refused`, () =>
        Effect.gen(function*() {
          const runtime = yield* SemanticRuntime.SemanticRuntime
          const error = yield* Effect.flip(runtime.execute(shop, custom("shop.malloy", query), { rowLimit: 10 }))
          assert.strictEqual(error._tag === "QueryFailed" ? error.reason : undefined, "compile")
          assert.match(error.message, /^Query refused: /)
        }))
    }
  })

  describe("connection changes", () => {
    it.effect("a fingerprint change recompiles the models using the connection and closes its old driver", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const { second } = yield* Fixture
        yield* runtime.describe(shop)
        yield* runtime.describe(catalog)
        const shopBefore = compiledCount(shop, "shop.malloy")
        const catalogBefore = compiledCount(catalog, "catalog.malloy")
        assert.strictEqual(shopBefore, 1)
        assert.strictEqual(catalogBefore, 1)
        assert.deepStrictEqual(closed, [])

        yield* updatePostgres({ databaseName: second })
        const view = yield* runtime.execute(shop, named("shop.malloy", "orders", "by_customer"), { rowLimit: 10 })
        assert.deepStrictEqual(view.rows.map((row) => [row["name"], Number(row["revenue"])]), [["Linus", 100]])
        assert.strictEqual(compiledCount(shop, "shop.malloy"), 2)
        assert.deepStrictEqual(closed, ["my_pg"])

        // The other connection did not change: its model stays compiled and its driver open.
        yield* runtime.execute(catalog, custom("catalog.malloy", "products -> { aggregate: product_count }"), { rowLimit: 1 })
        assert.strictEqual(compiledCount(catalog, "catalog.malloy"), 1)
        yield* runtime.describe(shop)
        assert.strictEqual(compiledCount(shop, "shop.malloy"), 2)
        assert.deepStrictEqual(closed, ["my_pg"])
      }))

    it.effect("a credential change keeps the compiled model and replaces the driver", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const before = compiledCount(shop, "shop.malloy")
        const closedBefore = closed.length
        // Trust authentication ignores the password; the driver is replaced all the same.
        yield* updatePostgres({ password: "rotated" })
        const total = yield* runtime.execute(shop, custom("shop.malloy", "orders -> { aggregate: revenue }"), { rowLimit: 1 })
        assert.strictEqual(Number(total.rows[0]?.["revenue"]), 100)
        assert.strictEqual(compiledCount(shop, "shop.malloy"), before)
        assert.deepStrictEqual(closed.slice(closedBefore), ["my_pg"])
      }))

    it.effect("a removed connection fails the next request instead of using the cached model", () =>
      Effect.gen(function*() {
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const repo = yield* ConnectionRepo.ConnectionRepo
        const saved = yield* repo.get({ organization, environment, name: "my_maria" }).pipe(Effect.orDie)
        yield* repo.remove({ organization, environment, name: "my_maria" }).pipe(Effect.orDie)
        const error = yield* Effect.flip(runtime.execute(catalog, named("catalog.malloy", "products", "by_name"), { rowLimit: 10 }))
        assert.strictEqual(error._tag, "ModelLoadFailed")
        assert.include(error.message, "no connection named my_maria")
        assert.include(closed, "my_maria")
        yield* repo.insert(saved).pipe(Effect.orDie)
        const view = yield* runtime.execute(catalog, named("catalog.malloy", "products", "by_name"), { rowLimit: 10 })
        assert.strictEqual(view.rows.length, 3)
      }))

    it.effect("drivers close when the layer's scope closes", () =>
      Effect.gen(function*() {
        const closedHere: Array<string> = []
        yield* Effect.scoped(Effect.gen(function*() {
          const services = yield* Layer.build(Runtime.layer(options((name) => closedHere.push(name))))
          const runtime = Context.get(services, SemanticRuntime.SemanticRuntime)
          yield* runtime.execute(shop, custom("shop.malloy", "orders -> { aggregate: order_count }"), { rowLimit: 1 })
          yield* runtime.execute(catalog, custom("catalog.malloy", "products -> { aggregate: product_count }"), { rowLimit: 1 })
          assert.deepStrictEqual(closedHere, [])
        }))
        assert.sameMembers(closedHere, ["my_pg", "my_maria"])
      }))

    it.effect("the deployment's TLS mode applies to direct PostgreSQL connections", () =>
      Effect.gen(function*() {
        // The machine's server has TLS off: requiring TLS must fail, naming the connection.
        const error = yield* Effect.scoped(Effect.gen(function*() {
          const services = yield* Layer.build(Runtime.layer({
            cacheDir: mkdtempSync(join(tmpdir(), "modelgate-malloy-env-")),
            connectTimeoutMillis: 5_000,
            postgresTls: "require"
          }))
          return yield* Effect.flip(Context.get(services, SemanticRuntime.SemanticRuntime).describe(shop))
        }))
        assert.strictEqual(error._tag, "ModelLoadFailed")
        assert.include(error.message, "connection my_pg (postgres): cannot connect to 127.0.0.1:5432")
        assert.match(error.message, /SSL|TLS/)
      }))
  })
})
