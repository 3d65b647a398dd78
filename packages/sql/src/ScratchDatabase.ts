/**
 * A throwaway database on a PostgreSQL server, for tests and benchmarks: created
 * with a unique name when acquired, dropped (with its connections) when the scope
 * closes, so runs never collide and leave nothing behind.
 */
import { Effect, Random, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"

const admin = (url: string, statement: string) =>
  Effect.flatMap(SqlClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie,
    Effect.asVoid
  )

/** A fresh database on the server of `serverUrl` (any database there); yields its name and URL. */
export const make = (serverUrl: string, prefix = "modelgate_scratch") =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = `${prefix}_${Date.now().toString(36)}_${(yield* Random.nextIntBetween(0, 1_000_000)).toString(36)}`
      yield* admin(serverUrl, `CREATE DATABASE ${name}`)
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      return { name, url: url.toString() }
    }),
    ({ name }) => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  )
