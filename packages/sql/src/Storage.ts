/**
 * modelgate's storage, composed: migrations, the start-up key check, and every
 * repository port of core over one SqlClient. Pick the client with
 * `layerPostgres` (a server) or `Pglite.layer` (embedded), and give it a
 * SecretCipher; the result provides ConnectionRepo, VersionRepo, PackageRepo,
 * PermissionRepo, OrganizationRepo and UserRepo.
 */
import { Config, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { ConnectionRepo, Notifier, OrganizationRepo, PackageRepo, PackageStore, PermissionRepo, SecretCipher, UserRepo, VersionRepo } from "@modelgate/core"
import * as Migrations from "./Migrations.ts"
import * as SqlConnectionRepo from "./SqlConnectionRepo.ts"
import * as SqlNotifier from "./SqlNotifier.ts"
import * as SqlOrganizationRepo from "./SqlOrganizationRepo.ts"
import * as SqlPackageStore from "./SqlPackageStore.ts"
import * as SqlPackageRepo from "./SqlPackageRepo.ts"
import * as SqlPermissionRepo from "./SqlPermissionRepo.ts"
import * as SqlUserRepo from "./SqlUserRepo.ts"
import * as SqlVersionRepo from "./SqlVersionRepo.ts"

/** The key ids that sealed values in the database were made with. */
export const storedKeyIds = Effect.gen(function*() {
  const sql = yield* SqlClient
  const rows = yield* sql<{ readonly key_id: string }>`SELECT DISTINCT unnest(secret_key_ids) AS key_id FROM connections ORDER BY 1`
  return rows.map((r) => r.key_id)
})

/**
 * Fails start-up when a stored secret was sealed with a key that is not configured:
 * every read of such a connection would fail, so the server must not come up.
 */
export const checkKeys = Effect.gen(function*() {
  const cipher = yield* SecretCipher.SecretCipher
  const missing = (yield* storedKeyIds).filter((id) => !cipher.keyIds.includes(id))
  if (missing.length > 0) {
    return yield* Effect.die(
      new Error(
        `MODELGATE_SECRET_KEYS lacks the key id(s) ${missing.join(", ")} that stored secrets were sealed with; ` +
          `add them back (they may stay non-current) or restore the matching keys`
      )
    )
  }
})

/** Every repository port of core. */
export type Repositories =
  | ConnectionRepo.ConnectionRepo
  | VersionRepo.VersionRepo
  | PackageRepo.PackageRepo
  | PermissionRepo.PermissionRepo
  | OrganizationRepo.OrganizationRepo
  | UserRepo.UserRepo
  | PackageStore.PackageStore
  | Notifier.Notifier

/** Every repository over the SqlClient in context. */
export const layerRepositories: Layer.Layer<Repositories, never, SqlClient | SecretCipher.SecretCipher> = Layer.mergeAll(
  SqlConnectionRepo.layer,
  SqlVersionRepo.layer,
  SqlPackageRepo.layer,
  SqlPermissionRepo.layer,
  SqlOrganizationRepo.layer,
  SqlUserRepo.layer,
  SqlPackageStore.layer,
  SqlNotifier.layer
)

/** Migrates, checks the secret keys, then provides every repository. */
export const layer: Layer.Layer<Repositories, never, SqlClient | SecretCipher.SecretCipher> = layerRepositories.pipe(
  Layer.provideMerge(Layer.effectDiscard(Effect.andThen(Effect.orDie(Migrations.run), Effect.orDie(checkKeys))))
)

/**
 * The largest message the client accepts: a published package's data file is one
 * bytea row, so the driver's 16 MiB default is too small; PostgreSQL caps a field at 1 GB.
 */
export const maxMessageSize = 1024 * 1024 * 1024

/** A PostgreSQL server client. */
export const layerPostgres = (options: { readonly url: Redacted.Redacted<string>; readonly maxConnections?: number }) =>
  PgClient.layer({
    url: options.url,
    maxConnections: options.maxConnections ?? 10,
    applicationName: "modelgate",
    maxMessageSize: maxMessageSize
  })

/** A PostgreSQL server client from `DATABASE_URL` and `MODELGATE_DB_POOL_SIZE` (default 10). */
export const layerPostgresConfig = PgClient.layerConfig({
  url: Config.Redacted("DATABASE_URL"),
  maxConnections: Config.Int("MODELGATE_DB_POOL_SIZE").pipe(Config.withDefault(10)),
  applicationName: Config.succeed("modelgate"),
  maxMessageSize: Config.succeed(maxMessageSize)
})
