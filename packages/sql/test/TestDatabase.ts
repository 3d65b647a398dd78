/**
 * Test databases: a fresh, migrated database per test run on the PostgreSQL
 * server named by DATABASE_URL (created on acquire, dropped on release), or a
 * fresh in-memory PGlite, each with storage layered on top.
 */
import { Effect, Layer, Random, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql/SqlClient"
import { SecretCipher } from "@modelgate/core"
import { Pglite, Storage } from "@modelgate/sql"

/** The PostgreSQL server URL when server-backed tests are enabled. */
export const serverUrl: string | undefined = process.env["DATABASE_URL"]

const withDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** A fresh database on the server for this run, dropped on release; yields its URL. */
export const freshServerDatabase = (url: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = `modelgate_test_${Date.now().toString(36)}_${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
      yield* adminQuery(url, `CREATE DATABASE ${name}`)
      return { name, url: withDatabase(url, name) }
    }),
    ({ name }) => Effect.orDie(adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  )

const adminQuery = (url: string, statement: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql.unsafe(statement)
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)

/** A PostgreSQL client on a fresh database of the server. */
export const serverClient = (url: string) =>
  Layer.unwrap(Effect.map(freshServerDatabase(url), (db) => Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 8 })))

/** An in-memory PGlite client. */
export const pgliteClient = Pglite.layer({ maxConnections: 4 })

/** Storage (migrated, every repository) on a client, with a fresh test cipher; the client stays visible. */
export const storageOn = <E>(client: Layer.Layer<SqlClient, E>) =>
  Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(client))
