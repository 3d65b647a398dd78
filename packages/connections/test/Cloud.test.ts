/**
 * The hosted types cannot reach their vendors from here, so each must fail fast
 * and clearly: local validation first, then a probe of the real endpoint bounded
 * by the connect timeout. Name resolution is replaced by one that records the
 * host and never answers (as on a machine without network), so no probe leaves
 * this machine.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Connection, Errors } from "@modelgate/core"
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import type * as Net from "node:net"
import * as Testers from "../src/Testers.ts"
import { closedPort, postgresDatabase } from "./Servers.ts"

const connectTimeoutMillis = 300

/** Options whose resolver never answers, and the host names it was asked for. */
const silentNetwork = () => {
  const asked: Array<string> = []
  const lookup: Net.LookupFunction = (hostname) => {
    asked.push(hostname)
  }
  return { options: { connectTimeoutMillis, lookup }, asked }
}

const settings = (type: Connection.ConnectionType, fields: Partial<Connection.ConnectionSettings>): Connection.ConnectionSettings => ({
  name: "cloud",
  type,
  excludeAllTables: false,
  ...fields
})

// Bounds the test itself: a tester that ignored its timeout would fail here, not hang.
const failsFast = (run: Effect.Effect<unknown, Errors.ConnectionTestFailed>) =>
  Effect.flip(run).pipe(
    Effect.timeoutOrElse({
      duration: connectTimeoutMillis * 3 + 5_000,
      orElse: () => Effect.die(new Error("the connection test did not return within its timeout"))
    })
  )

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" }
})

describe("CloudTesters", () => {
  it.live("bigquery: a valid key, then the BigQuery API endpoint cannot be reached within the timeout", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const serviceAccountKeyJson = JSON.stringify({
        type: "service_account",
        project_id: "demo-project",
        client_email: "tester@demo-project.iam.gserviceaccount.com",
        private_key: privateKey
      })
      const error = yield* failsFast(Testers.test(settings("bigquery", { bigqueryConnection: { serviceAccountKeyJson } }), options))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach bigquery.googleapis.com:443 within ${connectTimeoutMillis} ms`)
      assert.deepStrictEqual(asked, ["bigquery.googleapis.com"])
    }))

  it.live("bigquery: a key without private_key fails at settings without quoting the key", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const serviceAccountKeyJson = JSON.stringify({ client_email: "x@y.iam.gserviceaccount.com", private_key_id: "secret-id-42" })
      const error = yield* failsFast(Testers.test(settings("bigquery", { bigqueryConnection: { serviceAccountKeyJson } }), options))
      assert.strictEqual(error.step, "settings")
      assert.include(error.message, "client_email and private_key")
      assert.notInclude(error.message, "secret-id-42")
      assert.deepStrictEqual(asked, [])
    }))

  it.live("snowflake: the account's host cannot be reached within the timeout", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const error = yield* failsFast(Testers.test(
        settings("snowflake", { snowflakeConnection: { account: "MyOrg-My_Account", username: "svc", password: "pw-123" } }),
        options
      ))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach myorg-my-account.snowflakecomputing.com:443 within ${connectTimeoutMillis} ms`)
      assert.notInclude(error.message, "pw-123")
      assert.deepStrictEqual(asked, ["myorg-my-account.snowflakecomputing.com"])
    }))

  it.live("snowflake: a malformed account fails at settings", () =>
    Effect.gen(function*() {
      const { options } = silentNetwork()
      const error = yield* failsFast(Testers.test(
        settings("snowflake", { snowflakeConnection: { account: "https://x y", username: "svc", password: "pw" } }),
        options
      ))
      assert.strictEqual(error.step, "settings")
      assert.include(error.message, "account identifier")
    }))

  it.live("trino: the coordinator cannot be reached within the timeout", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const error = yield* failsFast(Testers.test(
        settings("trino", { trinoConnection: { server: "https://trino.internal.example", port: 8443, user: "analyst" } }),
        options
      ))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach trino.internal.example:8443 within ${connectTimeoutMillis} ms`)
      assert.deepStrictEqual(asked, ["trino.internal.example"])
    }))

  it.live("trino: a closed coordinator port fails at connect at once", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* failsFast(Testers.test(
        settings("trino", { trinoConnection: { server: `http://127.0.0.1:${port}` } }),
        { connectTimeoutMillis }
      ))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach 127.0.0.1:${port}: connection refused`)
    }))

  it.live("databricks: the workspace cannot be reached within the timeout", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const error = yield* failsFast(Testers.test(
        settings("databricks", {
          databricksConnection: { host: "https://adb-1234.5.azuredatabricks.net/", path: "/sql/1.0/warehouses/abc", token: "dapi-secret" }
        }),
        options
      ))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach adb-1234.5.azuredatabricks.net:443 within ${connectTimeoutMillis} ms`)
      assert.notInclude(error.message, "dapi-secret")
      assert.deepStrictEqual(asked, ["adb-1234.5.azuredatabricks.net"])
    }))

  it.live("motherduck: DuckDB's motherduck extension is not on this server", () =>
    Effect.gen(function*() {
      const { options, asked } = silentNetwork()
      const error = yield* failsFast(Testers.test(
        settings("motherduck", { motherduckConnection: { accessToken: "md-secret", database: "db" } }),
        options
      ))
      assert.strictEqual(error.step, "driver")
      assert.include(error.message, "MotherDuck: the motherduck DuckDB extension is not available on this server")
      assert.notInclude(error.message, "md-secret")
      assert.deepStrictEqual(asked, [])
    }))

  it.live("ducklake: the catalog is tested for real, then the ducklake extension is missing", () =>
    Effect.gen(function*() {
      const { options } = silentNetwork()
      const db = yield* postgresDatabase
      const lake = (postgresConnection: Connection.PostgresConnection) =>
        settings("ducklake", {
          ducklakeConnection: {
            storage: { bucketUrl: "s3://lake-bucket/data", s3Connection: { accessKeyId: "AKIA", secretAccessKey: "s3-secret", region: "eu-west-1" } },
            catalog: { postgresConnection }
          }
        })
      const missing = yield* failsFast(Testers.test(
        lake({ host: db.host, port: db.port, databaseName: db.database, userName: db.user, password: db.password }),
        options
      ))
      assert.strictEqual(missing.step, "driver")
      assert.include(missing.message, "DuckLake: the ducklake DuckDB extension is not available on this server")
      const port = yield* closedPort
      const unreachable = yield* failsFast(Testers.test(lake({ host: "127.0.0.1", port, userName: "postgres" }), options))
      assert.strictEqual(unreachable.step, "connect")
      assert.include(unreachable.message, `DuckLake catalog: cannot reach 127.0.0.1:${port}`)
    }))
})
