/**
 * Persist sources built for real: a version whose model declares `#@ persist` sources on an
 * environment PostgreSQL connection (a scratch database) is built by the version build through
 * `@modelgate/malloy`'s materializer: the tables exist with the sources' rows, a dependent source
 * is built after its dependency and reads its table, a scheduled refresh rebuilds them, a source on the
 * package's DuckDB leaves the version UNSUPPORTED, and a failing build fails the version. Queries
 * through the runtime read a persist source's built table once its build succeeded, live before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Connection, ConnectionService, PackageService, PackageVersion, SemanticRuntime, VersionRepo } from "@modelgate/core"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { registerHooks } from "node:module"
import { BuildPlan, Schedules, VersionBuild } from "@modelgate/jobs"
import { app } from "./fixtures/MaterializeApp.ts"
import { scratch, setupHierarchy, system } from "./Support.ts"

// vitest starts its workers with `--conditions import`, under which node-postgres's
// `require("pg-pool")` gets pg-pool's ES module wrapper; the server never sets it (see malloy's tests).
registerHooks({
  resolve: (specifier, context, nextResolve) =>
    nextResolve(specifier, specifier === "pg-pool" ? { ...context, conditions: context.conditions.filter((c) => c !== "import") } : context)
})

const env = { organization: "acme", environment: "prod" }
const ref = { ...env, package: "sales" }
const text = (s: string) => new TextEncoder().encode(s)

const model = (extra = "") => `##! experimental.persistence
source: orders is pg.table('public.orders')

#@ persist
source: revenue_by_customer is orders -> {
  group_by: customer
  aggregate: revenue is amount.sum(), order_count is count()
}

#@ persist
source: big_customers is revenue_by_customer -> {
  select: customer, revenue
  where: revenue > 100
}
${extra}`

const files = (malloy: string) => new Map([["publisher.json", text(JSON.stringify({ name: "sales" }))], ["model.malloy", text(malloy)]])

/** The rows of every `modelgate_` table of the data database, by table, sorted. */
const builtTables = (data: Context.Context<SqlClient>) =>
  Effect.gen(function*() {
    const sql = Context.get(data, SqlClient)
    const tables = yield* sql<{ readonly name: string }>`
      SELECT table_name AS name FROM information_schema.tables WHERE table_name LIKE 'modelgate\\_%' ORDER BY 1`
    const rows: Record<string, unknown> = {}
    for (const { name } of tables) {
      rows[name] = (yield* sql.unsafe<{ readonly row: string }>(`SELECT to_jsonb(t)::text AS row FROM "${name}" t ORDER BY 1`)).map((r) => r.row)
    }
    return rows as Record<string, ReadonlyArray<string>>
  }).pipe(Effect.orDie)

/** The two built tables of the model: the per-customer one has `order_count`. */
const classify = (tables: Record<string, ReadonlyArray<string>>) => {
  const all = Object.values(tables)
  return {
    byCustomer: all.find((rows) => rows.some((r) => r.includes("order_count"))),
    big: all.find((rows) => !rows.some((r) => r.includes("order_count")))
  }
}

/** Rows of a query as JSON text, for comparison (PostgreSQL numerics come back as numbers or strings). */
const rowsOf = (result: SemanticRuntime.QueryResult) => result.rows.map((row) => JSON.stringify(row))

/** The revenue per customer, by customer. */
const byCustomer: SemanticRuntime.QueryRequest = {
  _tag: "Custom",
  modelPath: "model.malloy",
  query: "run: revenue_by_customer -> { select: customer, revenue; order_by: customer }"
}

/** The scenario, on the data database `db` (with `orders`) and the app. */
const scenario = (db: { readonly name: string; readonly url: string }, data: Context.Context<SqlClient>) =>
  Effect.gen(function*() {
    const sql = Context.get(data, SqlClient)

      yield* setupHierarchy
      const connections = yield* ConnectionService.ConnectionService
      const url = new URL(db.url)
      yield* connections.create(system, env, Schema.decodeUnknownSync(Connection.ConnectionInput)({
        name: "pg", type: "postgres",
        postgresConnection: { host: url.hostname, port: Number(url.port), databaseName: db.name, userName: "postgres" }
      }))
      const packages = yield* PackageService.PackageService
      const versions = yield* VersionRepo.VersionRepo
      yield* packages.createPackage(system, env, { name: "sales" })

      // 1.0.0: two persist sources on pg, the second reading the first.
      yield* packages.publish(system, ref, "1.0.0", files(model()))
      assert.strictEqual(yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.0" }), "READY")
      const built = yield* packages.getVersion(system, { ...ref, version: "1.0.0" })
      assert.deepStrictEqual(built.buildPlan, {
        nodes: [
          { sourceId: "model.malloy#revenue_by_customer", name: "revenue_by_customer", connectionName: "pg", modelPath: "model.malloy" },
          { sourceId: "model.malloy#big_customers", name: "big_customers", connectionName: "pg", modelPath: "model.malloy" }
        ],
        edges: [{ from: "model.malloy#big_customers", to: "model.malloy#revenue_by_customer" }]
      })
      const first = yield* builtTables(data)
      const names = Object.keys(first)
      assert.strictEqual(names.length, 2)
      for (const name of names) assert.match(name, /^modelgate_[0-9a-f]{40}$/)
      // Rows as JSON text, in text order.
      assert.deepStrictEqual(classify(first), {
        byCustomer: ['{"revenue": 120, "customer": "linus", "order_count": 1}', '{"revenue": 150, "customer": "ada", "order_count": 2}', '{"revenue": 40, "customer": "grace", "order_count": 1}'],
        big: ['{"revenue": 120, "customer": "linus"}', '{"revenue": 150, "customer": "ada"}']
      })

      // A scheduled refresh rebuilds both, in plan order, from the new data, under the same names.
      yield* sql`INSERT INTO orders VALUES (5, 'grace', 90)`
      yield* Schedules.Refresh.execute({ ...ref, version: "1.0.0", tick: "2026-01-01T00:00:00.000Z" })
      const refreshed = yield* builtTables(data)
      assert.deepStrictEqual(Object.keys(refreshed), names)
      assert.deepStrictEqual(classify(refreshed), {
        byCustomer: ['{"revenue": 120, "customer": "linus", "order_count": 1}', '{"revenue": 130, "customer": "grace", "order_count": 2}', '{"revenue": 150, "customer": "ada", "order_count": 2}'],
        big: ['{"revenue": 120, "customer": "linus"}', '{"revenue": 130, "customer": "grace"}', '{"revenue": 150, "customer": "ada"}']
      })
      assert.strictEqual((yield* versions.get({ ...ref, version: "1.0.0" })).materialization, "succeeded")

      // The dependent is built from its dependency's table, not from the live source: with the
      // orders gone, a rebuild of big_customers alone still finds the three customers.
      yield* sql`DELETE FROM orders`
      const record = yield* versions.get({ ...ref, version: "1.0.0" })
      const dependent = record.buildPlan?.nodes.find((n) => n.name === "big_customers")
      assert.isDefined(dependent)
      if (dependent !== undefined) {
        yield* (yield* BuildPlan.Materializer).materialize({ ...ref, version: "1.0.0", location: record.location }, dependent)
      }
      assert.strictEqual(classify(yield* builtTables(data)).big?.length, 3)
      yield* sql`INSERT INTO orders VALUES (1, 'ada', 80)`

      // Served: with the version's builds, execute_query reads the built tables (three customers,
      // though the orders now hold one); without them (before any build) it reads the live rows.
      const runtime = yield* SemanticRuntime.SemanticRuntime
      const servedRecord = yield* versions.get({ ...ref, version: "1.0.0" })
      const builds = PackageVersion.builtTablesOf(servedRecord)
      assert.deepStrictEqual(builds.map((b) => b.table).sort(), [...names].sort())
      const unbuilt = { ...ref, version: "1.0.0", location: servedRecord.location }
      const served = { ...unbuilt, builds }
      const fromTables = yield* runtime.execute(served, byCustomer, { rowLimit: 10 })
      assert.deepStrictEqual(rowsOf(fromTables), [
        '{"customer":"ada","revenue":150}',
        '{"customer":"grace","revenue":130}',
        '{"customer":"linus","revenue":120}'
      ])
      assert.match(fromTables.sql ?? "", /modelgate_[0-9a-f]{40}/)
      const big = yield* runtime.execute(served, {
        _tag: "Custom", modelPath: "model.malloy", query: "run: big_customers -> { select: customer; order_by: customer }"
      }, { rowLimit: 10 })
      assert.deepStrictEqual(rowsOf(big), ['{"customer":"ada"}', '{"customer":"grace"}', '{"customer":"linus"}'])
      assert.match(big.sql ?? "", /modelgate_[0-9a-f]{40}/)
      const live = yield* runtime.execute(unbuilt, byCustomer, { rowLimit: 10 })
      assert.deepStrictEqual(rowsOf(live), ['{"customer":"ada","revenue":80}'])
      assert.notMatch(live.sql ?? "", /modelgate_/)
      // A build under another fingerprint or SQL (an unknown BuildID) is not read either.
      const foreign = yield* runtime.execute({ ...unbuilt, builds: [{ buildId: "0".repeat(64), table: names[0] ?? "" }] }, byCustomer, { rowLimit: 10 })
      assert.deepStrictEqual(rowsOf(foreign), ['{"customer":"ada","revenue":80}'])

      // 1.0.1: one more persist source, on the package's DuckDB: built nothing for it, UNSUPPORTED.
      yield* packages.publish(system, ref, "1.0.1", files(model(`
source: local is duckdb.sql("select 1 as x")
#@ persist
source: local_copy is local -> { select: x }
`)))
      assert.strictEqual(
        yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.1" }),
        "UNSUPPORTED",
        JSON.stringify((yield* versions.get({ ...ref, version: "1.0.1" })).metadata)
      )
      assert.strictEqual((yield* packages.getVersion(system, { ...ref, version: "1.0.1" })).buildPlan?.nodes.length, 3)

      // 1.0.2: a persist source whose SQL fails when it runs: FAILED, with the reason.
      yield* packages.publish(system, ref, "1.0.2", files(model(`
#@ persist
source: broken is pg.sql("select id, 1 / (id - id) AS boom from orders")
`)))
      assert.strictEqual(yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.2" }), "FAILED")
      const failed = yield* versions.get({ ...ref, version: "1.0.2" })
      assert.strictEqual(failed.materialization, "failed")
      assert.match(failed.metadata.displayErrorMessage ?? "", /^Materialization failed: persist source broken: .*division by zero/)
      // The failed source has no build: with the version's builds it still reads live (and fails as its SQL does).
      assert.isFalse((failed.builds ?? []).some((b) => b.sourceId === "model.malloy#broken"))
      const liveBroken = yield* runtime.execute(
        { ...ref, version: "1.0.2", location: failed.location, builds: PackageVersion.builtTablesOf(failed) },
        { _tag: "Custom", modelPath: "model.malloy", query: "run: broken -> { select: id, boom }" },
        { rowLimit: 10 }
      ).pipe(Effect.flip)
      assert.match(liveBroken.message, /division by zero/)
  })

describe("materialization of persist sources on PostgreSQL", () => {
  it.live("builds the tables in dependency order, rebuilds them on refresh; DuckDB sources serve live; a failing build fails the version", () =>
    Effect.gen(function*() {
      const db = yield* scratch
      const data = yield* Layer.build(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 }))
      const sql = Context.get(data, SqlClient)
      yield* sql`CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric NOT NULL)`
      yield* sql`INSERT INTO orders VALUES (1, 'ada', 80), (2, 'ada', 70), (3, 'grace', 40), (4, 'linus', 120)`
      // Built after the database, so its drivers close before the database is dropped.
      yield* Effect.provideContext(scenario(db, data), yield* Layer.build(app))
    }).pipe(Effect.scoped), { timeout: 120_000 })
})

