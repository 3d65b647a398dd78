#!/usr/bin/env node
/**
 * `modelgate-reencrypt`: moves every stored secret to the current key after a
 * rotation. Reads MODELGATE_SECRET_KEYS (all keys still in use, the new one
 * current) and DATABASE_URL, or MODELGATE_DATA_DIR for an embedded PGlite store.
 */
import { Config, Effect, Layer, Option } from "effect"
import { SecretCipher } from "@modelgate/core"
import * as Pglite from "../Pglite.ts"
import * as Reencrypt from "../Reencrypt.ts"
import * as Storage from "../Storage.ts"

const client = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.Redacted("DATABASE_URL"))
    if (Option.isSome(url)) return Storage.layerPostgres({ url: url.value, maxConnections: 2 })
    const dataDir = yield* Config.String("MODELGATE_DATA_DIR")
    return Pglite.layer({ dataDir })
  })
)

const program = Effect.gen(function*() {
  const moved = yield* Reencrypt.run
  yield* Effect.log(`re-encrypted the secrets of ${moved} connection(s)`)
}).pipe(Effect.provide(Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerConfig), Layer.provideMerge(client))))

Effect.runPromise(program).catch((error: unknown) => {
  process.stderr.write(`modelgate-reencrypt failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
