/**
 * The storage the CLI operates on, chosen like the example server does: the
 * PostgreSQL server of `DATABASE_URL` (then `MODELGATE_SECRET_KEYS` is required), or
 * embedded PGlite in `MODELGATE_DATA_DIR` (default `./.modelgate`), whose development
 * secret key is created once in that directory. A PGlite directory is locked to one
 * process, so a command fails with the owner's pid while the server runs on it.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { SecretCipher } from "@modelgate/core"
import { Testers } from "@modelgate/connections"
import { AdminServer } from "@modelgate/http"
import { Pglite, Storage } from "@modelgate/sql"
import * as DataDir from "./DataDir.ts"
import { OperatorError } from "./OperatorError.ts"

/** Where the state lives. */
export type Target =
  | { readonly _tag: "Server"; readonly url: Redacted.Redacted<string> }
  | { readonly _tag: "Embedded"; readonly dataDir: string }

/** `MODELGATE_DATA_DIR`, default `./.modelgate`: PGlite data and the development secrets. */
export const dataDir = Config.String("MODELGATE_DATA_DIR").pipe(Config.withDefault(DataDir.defaultDir))

/** The target from `DATABASE_URL` and `MODELGATE_DATA_DIR`. */
export const target: Effect.Effect<Target, Config.ConfigError> = Effect.gen(function*() {
  const url = yield* Config.option(Config.Redacted("DATABASE_URL"))
  if (Option.isSome(url)) return { _tag: "Server", url: url.value } as const
  return { _tag: "Embedded", dataDir: yield* dataDir } as const
})

// The CLI runs one command at a time: two sessions cover a transaction beside a read.
const client = (t: Target) =>
  t._tag === "Server" ? Storage.layerPostgres({ url: t.url, maxConnections: 2 }) : Pglite.layer({ dataDir: t.dataDir, maxConnections: 2 })

/**
 * The keys sealing connection secrets: `MODELGATE_SECRET_KEYS`, required with a server;
 * on an embedded store, the data directory's development key when the variable is unset.
 */
export const secretCipher = (t: Target): Layer.Layer<SecretCipher.SecretCipher, OperatorError | Config.ConfigError> =>
  Layer.unwrap(Effect.gen(function*() {
    const configured = yield* Config.option(Config.Redacted("MODELGATE_SECRET_KEYS"))
    if (Option.isNone(configured) && t._tag === "Server") {
      return yield* new OperatorError({ message: "MODELGATE_SECRET_KEYS is required with DATABASE_URL (see docs/operations.md)" })
    }
    const spec = Option.isSome(configured) ? Redacted.value(configured.value) : yield* DataDir.developmentSecretKeys(t._tag === "Embedded" ? t.dataDir : undefined)
    const keyring = SecretCipher.parseKeyring(spec)
    if (keyring._tag === "Failure") return yield* new OperatorError({ message: `MODELGATE_SECRET_KEYS: ${keyring.failure}` })
    return SecretCipher.SecretCipher.layerAesGcm(keyring.success)
  }))

/** The bare SQL client of the target: no migrations, no keys (what `migrate` needs). */
export const layerClient: Layer.Layer<SqlClient, unknown> = Layer.unwrap(Effect.map(target, client))

/** What `layerStorage` provides. */
export type Layers = Storage.Repositories | SqlClient | SecretCipher.SecretCipher

/** Every repository port, migrated, with the secret keys checked; the SqlClient and the cipher too. */
export const layerStorage: Layer.Layer<Layers, unknown> = Layer.unwrap(
  Effect.map(target, (t) =>
    Storage.layer.pipe(
      Layer.provideMerge(secretCipher(t)),
      Layer.provideMerge(client(t))
    ))
)

/** Core's admin services (connections tested for real, as the server does) over the storage. */
export const layerServices: Layer.Layer<AdminServer.Services | Storage.Repositories | SqlClient, unknown> = AdminServer.layerServices.pipe(
  Layer.provideMerge(Testers.layerConfig),
  Layer.provideMerge(layerStorage)
)
