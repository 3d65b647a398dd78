import { assert, describe, it } from "@effect/vitest"
import { Access, Connection, ConnectionService, ConnectionTester, Roles } from "@modelgate/core"
import { Effect, Layer, Random, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import mysql from "mysql2/promise"
import { ConnectionIndexing, JobsCluster, JobsMigrations, JobsPipelines } from "@modelgate/jobs"
import { Storage } from "@modelgate/sql"
import { scratch, setupHierarchy, storageOn, system } from "./Support.ts"

const input = Schema.decodeUnknownSync(Connection.ConnectionInput)
const env = { organization: "acme", environment: "prod" }

const app = (databaseUrl: string) => {
  const client = Storage.layerPostgres({ url: Redacted.make(databaseUrl), maxConnections: 8 })
  const jobs = Layer.mergeAll(ConnectionIndexing.layer, JobsPipelines.layer, Layer.effectDiscard(Effect.orDie(JobsMigrations.run)))
  return ConnectionService.ConnectionService.layer.pipe(
    Layer.provideMerge(Access.Access.layer),
    Layer.provideMerge(ConnectionTester.ConnectionTester.layerMemory),
    Layer.provideMerge(jobs),
    Layer.provideMerge(JobsCluster.layerSingle()),
    Layer.provideMerge(storageOn(client)),
    // Slow enough per table that the test sees progress, and can update mid-run.
    Layer.provideMerge(Layer.succeed(ConnectionIndexing.IndexingOptions, { connectTimeoutMillis: 5_000, duckdbPath: undefined, tablePause: 250 }))
  )
}

type Snapshot = { readonly status: string | null; readonly progress: Connection.Connection["indexingProgress"] }

/** Polls the connection until `done` holds; returns every distinct snapshot seen on the way. */
const watch = (actor: Roles.Actor, name: string, done: (s: Snapshot) => boolean) =>
  Effect.gen(function*() {
    const service = yield* ConnectionService.ConnectionService
    const seen: Array<Snapshot> = []
    for (let i = 0; i < 1200; i++) {
      const c = yield* service.get(actor, { ...env, name })
      const snapshot = { status: c.indexingStatus, progress: c.indexingProgress }
      const last = seen[seen.length - 1]
      if (last === undefined || JSON.stringify(last) !== JSON.stringify(snapshot)) seen.push(snapshot)
      if (done(snapshot)) return seen
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`indexing of ${name} did not settle: ${JSON.stringify(seen.slice(-3))}`))
  })

/** Asserts a full run: schema progress counted up to `tables`, suggestions progressed, INDEXED clears progress. */
const assertRun = (seen: ReadonlyArray<Snapshot>, tables: number) => {
  const schema = seen.filter((s) => s.status === "SCHEMA_INDEXING" && s.progress?.schemaProgress !== undefined)
  const completed = schema.map((s) => s.progress?.schemaProgress?.tablesCompleted ?? -1)
  assert.isTrue(completed.some((n) => n > 0 && n < tables), `a snapshot mid schema indexing: ${JSON.stringify(completed)}`)
  assert.strictEqual(schema[0]?.progress?.schemaProgress?.tablesTotal, tables)
  const suggestions = seen.filter((s) => s.status === "MODEL_SUGGESTION_INDEXING" && s.progress?.modelSuggestionsProgress !== undefined)
  assert.isTrue(suggestions.some((s) => (s.progress?.modelSuggestionsProgress?.tablesCompleted ?? 0) > 0))
  const final = seen[seen.length - 1]
  assert.strictEqual(final?.status, "INDEXED")
  assert.isNull(final?.progress)
}

const suggestionsOf = (name: string) =>
  Effect.map(ConnectionIndexing.stored({ ...env, name }), (stored) => {
    const s = stored?.suggestions ?? []
    return {
      tables: (stored?.tables ?? []).map((t) => t.name).sort(),
      columns: (stored?.tables ?? []).reduce((n, t) => n + t.columns.length, 0),
      joins: s.flatMap((t) => t.joins.map((j) => `${j.table.split(".").pop()}.${j.column}->${j.toTable.split(".").pop()}.${j.toColumn}`)).sort(),
      measures: s.reduce((n, t) => n + t.measures.length, 0),
      dimensions: s.reduce((n, t) => n + t.dimensions.length, 0),
      error: stored?.error ?? null
    }
  })

describe("connection indexing", () => {
  it.live("PostgreSQL: progress, counts, include/exclude, RETRY when updated mid-run", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* scratch
      yield* Effect.gen(function*() {
        yield* setupHierarchy
        const sql = yield* SqlClient
        const schema = `shop_${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
        yield* sql.unsafe(`CREATE SCHEMA ${schema}`)
        yield* sql.unsafe(`CREATE TABLE ${schema}.customers (id serial PRIMARY KEY, name text, created_at timestamptz)`)
        yield* sql.unsafe(`CREATE TABLE ${schema}.orders (id serial PRIMARY KEY, customer_id int, amount numeric, status text)`)
        yield* sql.unsafe(`CREATE TABLE ${schema}.products (id serial PRIMARY KEY, name text, price numeric)`)
        yield* sql.unsafe(`CREATE TABLE ${schema}.order_items (id serial PRIMARY KEY, order_id int, product_id int, quantity int, price numeric)`)
        yield* sql.unsafe(`CREATE TABLE ${schema}.audit_log (id serial PRIMARY KEY, payload text)`)
        const service = yield* ConnectionService.ConnectionService
        const url = new URL(db.url)
        const settings = (exclude: ReadonlyArray<string>) => input({
          name: "shop",
          type: "postgres",
          postgresConnection: { host: "127.0.0.1", port: 5432, userName: "postgres", databaseName: url.pathname.slice(1) },
          includeTables: [`${schema}.*`],
          excludeTables: exclude
        })
        yield* service.create(system, env, settings([`${schema}.audit_log`]))
        const first = yield* watch(system, "shop", (s) => s.status === "INDEXED" || s.status === "FAILED")
        assertRun(first, 4)
        assert.deepStrictEqual(yield* suggestionsOf("shop"), {
          tables: ["customers", "order_items", "orders", "products"],
          columns: 3 + 4 + 3 + 5,
          joins: ["order_items.order_id->orders.id", "order_items.product_id->products.id", "orders.customer_id->customers.id"],
          // A row count per table, and a sum of each numeric non-key column.
          measures: 4 + 4,
          dimensions: 3 + 3 + 2 + 3,
          error: null
        })

        // Updated while schema indexing runs: RETRY, then a full re-index on the new settings.
        yield* service.update(system, { ...env, name: "shop" }, settings([]))
        yield* watch(system, "shop", (s) => s.status === "SCHEMA_INDEXING" && (s.progress?.schemaProgress?.tablesCompleted ?? 0) >= 1)
        const updated = yield* service.update(system, { ...env, name: "shop" }, settings([`${schema}.audit_log`, `${schema}.products`]))
        assert.strictEqual(updated.indexingStatus, "RETRY")
        const retried = yield* watch(system, "shop", (s) => s.status === "INDEXED" || s.status === "FAILED")
        assert.strictEqual(retried[0]?.status, "RETRY")
        assertRun(retried.slice(retried.findIndex((s) => s.status === "SCHEMA_INDEXING")), 3)
        const after = yield* suggestionsOf("shop")
        assert.deepStrictEqual(after.tables, ["customers", "order_items", "orders"])
        assert.deepStrictEqual(after.joins, ["order_items.order_id->orders.id", "orders.customer_id->customers.id"])

        // excludeAllTables: SKIPPED.
        yield* service.update(system, { ...env, name: "shop" }, input({
          name: "shop",
          type: "postgres",
          postgresConnection: { host: "127.0.0.1", port: 5432, userName: "postgres", databaseName: url.pathname.slice(1) },
          excludeAllTables: true
        }))
        const skipped = yield* watch(system, "shop", (s) => s.status === "SKIPPED")
        assert.isNull(skipped[skipped.length - 1]?.progress)

        // An unreachable database: FAILED, with the message stored.
        yield* service.create(system, env, input({ name: "broken", type: "postgres", postgresConnection: { host: "127.0.0.1", port: 5432, userName: "postgres", databaseName: "no_such_database_here" } }))
        yield* watch(system, "broken", (s) => s.status === "FAILED")
        assert.include((yield* suggestionsOf("broken")).error ?? "", "no_such_database_here")
      }).pipe(Effect.provide(app(db.url)))
    })), { timeout: 120_000 })

  it.live("MariaDB: progress, counts, include/exclude", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* scratch
      const prefix = `t${Date.now().toString(36)}${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
      const maria = yield* Effect.acquireRelease(
        Effect.promise(() => mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root", password: "", database: "test" })),
        (c) => Effect.promise(() => c.end())
      )
      const names = ["customers", "orders", "products", "order_items", "audit_log"].map((n) => `${prefix}_${n}`)
      yield* Effect.addFinalizer(() => Effect.promise(() => maria.query(`DROP TABLE IF EXISTS ${names.join(", ")}`)))
      yield* Effect.promise(async () => {
        await maria.query(`CREATE TABLE ${prefix}_customers (id int PRIMARY KEY, name varchar(50), created_at datetime)`)
        await maria.query(`CREATE TABLE ${prefix}_orders (id int PRIMARY KEY, customer_id int, amount decimal(10,2), status varchar(20))`)
        await maria.query(`CREATE TABLE ${prefix}_products (id int PRIMARY KEY, name varchar(50), price double)`)
        await maria.query(`CREATE TABLE ${prefix}_order_items (id int PRIMARY KEY, order_id int, product_id int, quantity int, price decimal(10,2))`)
        await maria.query(`CREATE TABLE ${prefix}_audit_log (id int PRIMARY KEY, payload text)`)
      })
      yield* Effect.gen(function*() {
        yield* setupHierarchy
        const service = yield* ConnectionService.ConnectionService
        yield* service.create(system, env, input({
          name: "maria",
          type: "mysql",
          mysqlConnection: { host: "127.0.0.1", port: 3306, user: "root", database: "test" },
          includeTables: names.slice(0, 4).map((n) => `test.${n}`).concat([`test.${prefix}_audit_log`]),
          excludeTables: [`test.${prefix}_audit_log`, `test.${prefix}_products`]
        }))
        const seen = yield* watch(system, "maria", (s) => s.status === "INDEXED" || s.status === "FAILED")
        assertRun(seen, 3)
        assert.deepStrictEqual(yield* suggestionsOf("maria"), {
          tables: [`${prefix}_customers`, `${prefix}_order_items`, `${prefix}_orders`],
          columns: 3 + 4 + 5,
          joins: [`${prefix}_order_items.order_id->${prefix}_orders.id`, `${prefix}_orders.customer_id->${prefix}_customers.id`],
          measures: 3 + 3,
          dimensions: 3 + 3 + 3,
          error: null
        })
      }).pipe(Effect.provide(app(db.url)))
    })), { timeout: 120_000 })
})
