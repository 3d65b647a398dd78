/**
 * Test databases: a fresh, migrated database per test run on the PostgreSQL
 * server named by DATABASE_URL (created on acquire, dropped on release), or a
 * fresh in-memory PGlite, each with storage layered on top.
 */
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { SecretCipher } from "@modelgate/core"
import { Pglite, ScratchDatabase, Storage } from "@modelgate/sql"

/** The PostgreSQL server URL when server-backed tests are enabled. */
export const serverUrl: string | undefined = process.env["DATABASE_URL"]

/** A fresh database on the server for this run, dropped on release; yields its URL. */
export const freshServerDatabase = (url: string) => ScratchDatabase.make(url, "modelgate_test")

/** A PostgreSQL client on a fresh database of the server. */
export const serverClient = (url: string) =>
  Layer.unwrap(Effect.map(freshServerDatabase(url), (db) => Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 8 })))

/** An in-memory PGlite client. */
export const pgliteClient = Pglite.layer({ maxConnections: 4 })

/** Storage (migrated, every repository) on a client, with a fresh test cipher; the client stays visible. */
export const storageOn = <E>(client: Layer.Layer<SqlClient, E>) =>
  Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(client))
