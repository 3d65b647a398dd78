/**
 * Persist sources on a MariaDB connection: the version build creates the built table in the
 * connection's database with the source's rows, and queries through the runtime read that table
 * once the build succeeded (with the version's builds), the live rows otherwise. Runs in a scratch
 * MariaDB database of its own, dropped at the end.
 */
import { assert, describe, it } from "@effect/vitest"
import { Connection, ConnectionService, PackageService, PackageVersion, SemanticRuntime, VersionRepo } from "@modelgate/core"
import { Effect, Random, Schema } from "effect"
import mysql from "mysql2/promise"
import { VersionBuild } from "@modelgate/jobs"
import { app } from "./fixtures/MaterializeApp.ts"
import { setupHierarchy, system } from "./Support.ts"

const env = { organization: "acme", environment: "prod" }
const ref = { ...env, package: "sales" }
const text = (s: string) => new TextEncoder().encode(s)

const model = `##! experimental.persistence
source: orders is my.table('orders')

#@ persist
source: revenue_by_customer is orders -> {
  group_by: customer
  aggregate: revenue is amount.sum(), order_count is count()
}
`

const files = new Map([["publisher.json", text(JSON.stringify({ name: "sales" }))], ["model.malloy", text(model)]])

const byCustomer: SemanticRuntime.QueryRequest = {
  _tag: "Custom",
  modelPath: "model.malloy",
  query: "run: revenue_by_customer -> { select: customer, revenue, order_count; order_by: customer }"
}

/** Rows as JSON with numbers as numbers (MariaDB decimals may come back as strings). */
const rowsOf = (result: SemanticRuntime.QueryResult) =>
  result.rows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "string" && /^\d+(\.\d+)?$/.test(v) ? Number(v) : v]))))

describe("materialization of persist sources on MariaDB", () => {
  it.live("builds the table in the connection's database and serves it; without builds the source reads live", () =>
    Effect.scoped(Effect.gen(function*() {
      const name = `mg_mat_${Date.now().toString(36)}${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
      const maria = yield* Effect.acquireRelease(
        Effect.promise(() => mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root", password: "" })),
        (c) => Effect.promise(() => c.end())
      )
      yield* Effect.acquireRelease(
        Effect.promise(() => maria.query(`CREATE DATABASE ${name}`)),
        () => Effect.promise(() => maria.query(`DROP DATABASE IF EXISTS ${name}`))
      )
      yield* Effect.promise(async () => {
        await maria.query(`CREATE TABLE ${name}.orders (id int PRIMARY KEY, customer varchar(50) NOT NULL, amount decimal(10,2) NOT NULL)`)
        await maria.query(`INSERT INTO ${name}.orders VALUES (1, 'ada', 80), (2, 'ada', 70), (3, 'grace', 40), (4, 'linus', 120)`)
      })
      const builtTables = Effect.promise(async () => {
        const [rows] = await maria.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE 'modelgate\\_%'`, [name])
        return (rows as Array<{ name: string }>).map((r) => r.name)
      })

      yield* Effect.gen(function*() {
        yield* setupHierarchy
        const connections = yield* ConnectionService.ConnectionService
        yield* connections.create(system, env, Schema.decodeUnknownSync(Connection.ConnectionInput)({
          name: "my", type: "mysql", mysqlConnection: { host: "127.0.0.1", port: 3306, user: "root", database: name }
        }))
        const packages = yield* PackageService.PackageService
        const versions = yield* VersionRepo.VersionRepo
        yield* packages.createPackage(system, env, { name: "sales" })
        yield* packages.publish(system, ref, "1.0.0", files)
        const status = yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.0" })
        const record = yield* versions.get({ ...ref, version: "1.0.0" })
        assert.strictEqual(status, "READY", JSON.stringify(record.metadata))
        assert.strictEqual(record.materialization, "succeeded")

        // The built table holds the source's rows.
        const tables = yield* builtTables
        assert.strictEqual(tables.length, 1)
        const table = tables[0] ?? ""
        assert.match(table, /^modelgate_[0-9a-f]{40}$/)
        const [stored] = yield* Effect.promise(() => maria.query(`SELECT customer, revenue, order_count FROM ${name}.${table} ORDER BY customer`))
        assert.deepStrictEqual((stored as Array<Record<string, unknown>>).map((r) => [r["customer"], Number(r["revenue"]), Number(r["order_count"])]), [
          ["ada", 150, 2], ["grace", 40, 1], ["linus", 120, 1]
        ])

        // Served from the table once the raw rows change; live without the version's builds.
        yield* Effect.promise(() => maria.query(`DELETE FROM ${name}.orders WHERE customer <> 'ada'`))
        const runtime = yield* SemanticRuntime.SemanticRuntime
        const builds = PackageVersion.builtTablesOf(record)
        assert.deepStrictEqual(builds.map((b) => b.table), [table])
        const unbuilt = { ...ref, version: "1.0.0", location: record.location }
        const fromTable = yield* runtime.execute({ ...unbuilt, builds }, byCustomer, { rowLimit: 10 })
        assert.deepStrictEqual(rowsOf(fromTable), [
          '{"customer":"ada","revenue":150,"order_count":2}',
          '{"customer":"grace","revenue":40,"order_count":1}',
          '{"customer":"linus","revenue":120,"order_count":1}'
        ])
        assert.include(fromTable.sql ?? "", table)
        const live = yield* runtime.execute(unbuilt, byCustomer, { rowLimit: 10 })
        assert.deepStrictEqual(rowsOf(live), ['{"customer":"ada","revenue":150,"order_count":2}'])
        assert.notInclude(live.sql ?? "", "modelgate_")
      }).pipe(Effect.provide(app))
    })), { timeout: 120_000 })
})
