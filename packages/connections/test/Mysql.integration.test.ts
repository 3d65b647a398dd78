/**
 * The MySQL tester against the machine's MariaDB, with a fresh database and a
 * user that has a password.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Connection } from "@modelgate/core"
import { Effect } from "effect"
import * as Testers from "../src/Testers.ts"
import { closedPort, mysqlDatabase } from "./Servers.ts"

const options = { connectTimeoutMillis: 5_000 }

const mysql = (mysqlConnection: Connection.MysqlConnection): Connection.ConnectionSettings => ({
  name: "my",
  type: "mysql",
  excludeAllTables: false,
  mysqlConnection
})

describe("MysqlTester", () => {
  it.live("connects and reports the server version", () =>
    Effect.gen(function*() {
      const db = yield* mysqlDatabase
      const report = yield* Testers.test(
        mysql({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password }),
        options
      )
      assert.match(report.serverVersion ?? "", /^\d+\.\d+/)
    }))

  it.live("a wrong password fails at authenticate without echoing it", () =>
    Effect.gen(function*() {
      const db = yield* mysqlDatabase
      const error = yield* Effect.flip(Testers.test(
        mysql({ host: db.host, port: db.port, database: db.database, user: db.user, password: "not-the-password" }),
        options
      ))
      assert.strictEqual(error.step, "authenticate")
      assert.include(error.message, "Access denied")
      assert.notInclude(error.message, "not-the-password")
    }))

  it.live("an unknown database fails at database", () =>
    Effect.gen(function*() {
      const db = yield* mysqlDatabase
      const error = yield* Effect.flip(Testers.test(
        mysql({ host: db.host, port: db.port, database: `${db.database}_missing`, user: "root" }),
        options
      ))
      assert.strictEqual(error.step, "database")
      assert.include(error.message, `${db.database}_missing`)
    }))

  it.live("a closed port fails at connect and names the target", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* Effect.flip(Testers.test(mysql({ host: "127.0.0.1", port, user: "root" }), options))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach 127.0.0.1:${port}: connection refused`)
    }))
})
