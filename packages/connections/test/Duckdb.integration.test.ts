/**
 * The DuckDB tester: an in-memory DuckDB without attachments, a PostgreSQL
 * attachment tested for real against the machine's server, and an attachment
 * whose extension this server does not have.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Connection } from "@modelgate/core"
import { Effect } from "effect"
import * as Testers from "../src/Testers.ts"
import { postgresDatabase } from "./Servers.ts"

const options = { connectTimeoutMillis: 5_000 }

const duckdb = (attachedDatabases?: ReadonlyArray<Connection.AttachedDatabase>): Connection.ConnectionSettings => ({
  name: "duck",
  type: "duckdb",
  excludeAllTables: false,
  ...(attachedDatabases === undefined ? {} : { duckdbConnection: { attachedDatabases } })
})

describe("DuckdbTester", () => {
  it.live("without attachments DuckDB answers select 42", () =>
    Effect.gen(function*() {
      const report = yield* Testers.test(duckdb(), options)
      assert.match(report.serverVersion ?? "", /^DuckDB v\d+\.\d+/)
    }))

  it.live("a PostgreSQL attachment is tested for real", () =>
    Effect.gen(function*() {
      const db = yield* postgresDatabase
      const attached = (password: string): Connection.AttachedDatabase => ({
        name: "warehouse",
        type: "postgres",
        postgresConnection: { host: db.host, port: db.port, databaseName: db.database, userName: db.user, password }
      })
      const report = yield* Testers.test(duckdb([attached(db.password)]), options)
      assert.match(report.serverVersion ?? "", /^DuckDB/)
      const error = yield* Effect.flip(Testers.test(
        duckdb([{ ...attached(db.password), postgresConnection: { host: db.host, port: db.port, databaseName: "mg_no_such_db", userName: db.user } }]),
        options
      ))
      assert.strictEqual(error.step, "database")
      assert.include(error.message, "attached database \"warehouse\": ")
    }))

  it.live("an attachment whose extension is missing fails fast, before any network check", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Testers.test(
        duckdb([
          { name: "pg", type: "postgres", postgresConnection: { host: "127.0.0.1", port: 1, userName: "postgres" } },
          { name: "lake", type: "s3", s3Connection: { accessKeyId: "AKIA", secretAccessKey: "s3-secret", region: "us-east-1" } }
        ]),
        options
      ))
      assert.strictEqual(error.step, "driver")
      assert.include(error.message, "attached database \"lake\" (s3): the httpfs DuckDB extension is not available on this server")
      assert.notInclude(error.message, "s3-secret")
    }))
})
