/**
 * The tables of the jobs package, migrated apart from the storage schema (own
 * history table), so the pipelines can be added to a deployment without touching
 * @modelgate/sql. The cluster's own tables (`cluster_*`) are migrated by effect.
 */
import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"

const m0001 = Effect.gen(function*() {
  const sql = yield* SqlClient
  // The last indexing result of each connection: its schema, its model
  // suggestions, and the message of the last failure.
  yield* sql`
    CREATE TABLE modelgate_connection_indexes (
      organization text NOT NULL,
      environment text NOT NULL,
      connection text NOT NULL,
      tables jsonb NOT NULL DEFAULT '[]',
      suggestions jsonb NOT NULL DEFAULT '[]',
      error text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment, connection)
    )`
})

/** Every migration, by `<id>_<name>`. */
export const migrations = { "0001_connection_indexes": m0001 } as const

/** Applies pending migrations. */
export const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "modelgate_jobs_migrations" })
