/**
 * The PostgreSQL tester against real servers: the machine's PostgreSQL (a fresh
 * database and password role) and a private cluster with password authentication
 * and TLS, where a wrong password really fails.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Connection, ConnectionTester } from "@modelgate/core"
import { Effect, Layer } from "effect"
import * as Testers from "../src/Testers.ts"
import { closedPort, PasswordPostgres, postgresDatabase } from "./Servers.ts"

const options = { connectTimeoutMillis: 5_000 }

const postgres = (postgresConnection: Connection.PostgresConnection): Connection.ConnectionSettings => ({
  name: "pg",
  type: "postgres",
  excludeAllTables: false,
  postgresConnection
})

const failure = (settings: Connection.ConnectionSettings, testerOptions: Testers.Options = options) =>
  Effect.flip(Testers.test(settings, testerOptions))

describe("PostgresTester", () => {
  layer(Layer.mergeAll(Testers.layer(options), PasswordPostgres.layer), { excludeTestServices: true })((it) => {
    it.effect("connects with parameters and reports the server version", () =>
      Effect.gen(function*() {
        const db = yield* postgresDatabase
        const tester = yield* ConnectionTester.ConnectionTester
        const report = yield* tester.test(postgres({
          host: db.host,
          port: db.port,
          databaseName: db.database,
          userName: db.user,
          password: db.password
        }))
        assert.match(report.serverVersion ?? "", /^PostgreSQL \d+/)
        assert.isAtLeast(report.elapsedMillis, 0)
      }))

    it.effect("connects with a connection string", () =>
      Effect.gen(function*() {
        const db = yield* postgresDatabase
        const report = yield* Testers.test(
          postgres({
            connectionString: `postgresql://${db.user}:${encodeURIComponent(db.password)}@${db.host}:${db.port}/${db.database}`
          }),
          options
        )
        assert.match(report.serverVersion ?? "", /^PostgreSQL/)
      }))

    it.effect("a wrong password fails at authenticate without echoing it", () =>
      Effect.gen(function*() {
        const server = yield* PasswordPostgres
        const wrong = "not-the-password"
        const error = yield* failure(postgres({
          host: server.host,
          port: server.port,
          databaseName: "postgres",
          userName: server.user,
          password: wrong
        }))
        assert.strictEqual(error.step, "authenticate")
        assert.include(error.message, "password authentication failed")
        assert.notInclude(error.message, wrong)
        assert.strictEqual(error.code, "VALIDATION_ERROR")
      }))

    it.effect("the right password passes on the password-only cluster", () =>
      Effect.gen(function*() {
        const server = yield* PasswordPostgres
        const report = yield* Testers.test(
          postgres({ host: server.host, port: server.port, databaseName: "postgres", userName: server.user, password: server.password }),
          options
        )
        assert.match(report.serverVersion ?? "", /^PostgreSQL/)
      }))

    it.effect("a wrong password in a connection string fails at authenticate without echoing the string", () =>
      Effect.gen(function*() {
        const server = yield* PasswordPostgres
        const connectionString = `postgres://${server.user}:Secret-Bad-1@${server.host}:${server.port}/postgres`
        const error = yield* failure(postgres({ connectionString }))
        assert.strictEqual(error.step, "authenticate")
        assert.notInclude(error.message, "Secret-Bad-1")
      }))

    it.effect("an unknown database fails at database", () =>
      Effect.gen(function*() {
        const db = yield* postgresDatabase
        const error = yield* failure(postgres({
          host: db.host,
          port: db.port,
          databaseName: `${db.database}_missing`,
          userName: db.user,
          password: db.password
        }))
        assert.strictEqual(error.step, "database")
        assert.include(error.message, `${db.database}_missing`)
      }))

    it.effect("a closed port fails at connect and names the target", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const error = yield* failure(postgres({ host: "127.0.0.1", port, userName: "postgres" }))
        assert.strictEqual(error.step, "connect")
        assert.include(error.message, `cannot reach 127.0.0.1:${port}: connection refused`)
      }))

    it.effect("direct TLS allow: a server that admits the user only over TLS is retried with TLS", () =>
      Effect.gen(function*() {
        const server = yield* PasswordPostgres
        const settings = postgres({
          host: server.host,
          port: server.port,
          databaseName: "postgres",
          userName: server.tlsOnlyUser,
          password: server.tlsOnlyPassword
        })
        const report = yield* Testers.test(settings, options)
        assert.match(report.serverVersion ?? "", /^PostgreSQL/)
        const refused = yield* failure(settings, { ...options, postgresTls: "disable" })
        assert.strictEqual(refused.step, "authenticate")
        assert.include(refused.message, "no encryption")
      }))

    it.effect("direct TLS require encrypts without verifying; verify-full rejects a self-signed certificate", () =>
      Effect.gen(function*() {
        const server = yield* PasswordPostgres
        const settings = postgres({
          host: server.host,
          port: server.port,
          databaseName: "postgres",
          userName: server.tlsOnlyUser,
          password: server.tlsOnlyPassword
        })
        yield* Testers.test(settings, { ...options, postgresTls: "require" })
        const error = yield* failure(settings, { ...options, postgresTls: "verify-full" })
        assert.strictEqual(error.step, "connect")
        assert.include(error.message, "TLS verification of 127.0.0.1")
      }))

    it.effect("direct TLS require fails clearly against a server without TLS", () =>
      Effect.gen(function*() {
        const db = yield* postgresDatabase
        const error = yield* failure(
          postgres({ host: db.host, port: db.port, databaseName: db.database, userName: db.user, password: db.password }),
          { ...options, postgresTls: "require" }
        )
        assert.strictEqual(error.step, "connect")
        assert.include(error.message, "does not accept TLS")
      }))

    it.effect("settings without a host fail at settings", () =>
      Effect.gen(function*() {
        const error = yield* failure(postgres({ userName: "x" }))
        assert.strictEqual(error.step, "settings")
        const bad = yield* failure(postgres({ connectionString: "mysql://nope" }))
        assert.strictEqual(bad.step, "settings")
        assert.notInclude(bad.message, "nope")
      }))
  })
})
