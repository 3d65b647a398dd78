/**
 * Re-encryption after a key rotation: every connection whose secrets were sealed
 * with a key other than the current one is opened and sealed again with the
 * current key, one row per transaction (locked while it is rewritten). Run it
 * after adding a new current key; afterwards the old key can be removed.
 */
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Connection, SecretCipher } from "@modelgate/core"
import { json } from "./internal/rows.ts"
import { openSettings, sealSettings } from "./SqlConnectionRepo.ts"

const decodeSettings = Schema.decodeUnknownSync(Connection.ConnectionSettings)
const encodeSettings = Schema.encodeSync(Connection.ConnectionSettings)

/** Re-seals every connection not sealed with the current key only; returns how many rows moved. */
export const run = Effect.gen(function*() {
  const sql = yield* SqlClient
  const cipher = yield* SecretCipher.SecretCipher
  const stale = yield* sql<{ readonly organization: string; readonly environment: string; readonly name: string }>`
    SELECT organization, environment, name FROM connections
    WHERE NOT (secret_key_ids <@ ARRAY[${cipher.currentKeyId}]::text[])
    ORDER BY organization, environment, name`
  let moved = 0
  for (const ref of stale) {
    yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ readonly settings: unknown }>`
        SELECT settings FROM connections
        WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}
        FOR UPDATE`
      const row = rows[0]
      if (row === undefined) return
      const plain = yield* openSettings(cipher, ref, decodeSettings(json(row.settings)))
      const { keyIds, value } = yield* sealSettings(cipher, ref, plain)
      // The logical content is unchanged, so the revision stays: concurrent writers are not disturbed.
      yield* sql`
        UPDATE connections SET settings = ${JSON.stringify(encodeSettings(value))}::jsonb, secret_key_ids = ${keyIds}::text[]
        WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}`
      moved++
    }))
  }
  yield* Effect.logInfo("re-encryption finished").pipe(Effect.annotateLogs({ rows: moved, currentKeyId: cipher.currentKeyId }))
  return moved
})
