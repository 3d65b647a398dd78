/**
 * ConnectionRepo on PostgreSQL. Settings are stored as JSON in which every
 * write-only secret is sealed by SecretCipher, bound to the connection's identity
 * and the field's path; the key ids used are kept beside them so start-up can
 * check that every key is configured and re-encryption can find old rows.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Connection, ConnectionRepo, Errors, IndexingStatus, SecretCipher, WriteOnly } from "@modelgate/core"
import { conflictOnUnique, iso, isoOrNull, json, time, timeOrNull } from "./internal/rows.ts"

type Ref = ConnectionRepo.ConnectionRef
type Record = ConnectionRepo.ConnectionRecord

/** The associated data of one sealed secret: the connection's identity and the field's path. */
export const associatedData = (ref: Ref, path: ReadonlyArray<string | number>): string =>
  `connection:${ref.organization}/${ref.environment}/${ref.name}#${path.join(".")}`

const pathKey = (path: ReadonlyArray<string | number>) => path.join("\u0000")

/** Replaces every secret of `settings` with its sealed form; returns the sealed settings and key ids used. */
export const sealSettings = Effect.fnUntraced(function*(cipher: SecretCipher.SecretCipher["Service"], ref: Ref, settings: Connection.ConnectionSettings) {
  const secrets = WriteOnly.collectSecrets(Connection.ConnectionSettings, settings)
  const sealed = new Map<string, string>()
  for (const secret of secrets) sealed.set(pathKey(secret.path), yield* cipher.seal(secret.value, associatedData(ref, secret.path)))
  const value = WriteOnly.mapSecrets(Connection.ConnectionSettings, settings, (plain, path) => sealed.get(pathKey(path)) ?? plain)
  const keyIds = [...new Set([...sealed.values()].map((s) => cipher.keyIdOf(s) ?? ""))].sort()
  return { value, keyIds }
})

/** Opens every sealed secret of stored settings. */
export const openSettings = Effect.fnUntraced(function*(cipher: SecretCipher.SecretCipher["Service"], ref: Ref, stored: Connection.ConnectionSettings) {
  const secrets = WriteOnly.collectSecrets(Connection.ConnectionSettings, stored)
  const opened = new Map<string, string>()
  for (const secret of secrets) opened.set(pathKey(secret.path), yield* cipher.open(secret.value, associatedData(ref, secret.path)))
  return WriteOnly.mapSecrets(Connection.ConnectionSettings, stored, (sealed, path) => opened.get(pathKey(path)) ?? sealed)
})

const decodeSettings = Schema.decodeUnknownSync(Connection.ConnectionSettings)
const encodeSettings = Schema.encodeSync(Connection.ConnectionSettings)
const decodeProgress = Schema.decodeUnknownSync(Schema.NullOr(IndexingStatus.ConnectionIndexingProgress))
const decodeStatus = Schema.decodeUnknownSync(IndexingStatus.IndexingStatus)

interface Row {
  readonly organization: string
  readonly environment: string
  readonly name: string
  readonly settings: unknown
  readonly indexing_status: string
  readonly indexing_status_last_updated: unknown
  readonly indexing_progress: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly revision: number
}

/** ConnectionRepo over SqlClient; needs SecretCipher. */
export const layer = Layer.effect(
  ConnectionRepo.ConnectionRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const cipher = yield* SecretCipher.SecretCipher

    const fromRow = (row: Row): Effect.Effect<Record> => {
      const ref = { organization: row.organization, environment: row.environment, name: row.name }
      return Effect.map(
        // A secret that cannot be opened is a broken installation (wrong keys), not a request error.
        Effect.orDie(openSettings(cipher, ref, decodeSettings(json(row.settings)))),
        (settings): Record => ({
          organization: row.organization,
          environment: row.environment,
          settings,
          indexingStatus: decodeStatus(row.indexing_status),
          indexingStatusLastUpdated: timeOrNull(row.indexing_status_last_updated),
          indexingProgress: decodeProgress(json(row.indexing_progress)),
          createdAt: time(row.created_at),
          updatedAt: time(row.updated_at),
          revision: row.revision
        })
      )
    }

    const sealed = (record: Record) =>
      Effect.map(sealSettings(cipher, ConnectionRepo.refOf(record), record.settings), ({ keyIds, value }) => ({
        settings: JSON.stringify(encodeSettings(value)),
        keyIds
      }))

    const notFound = (ref: Ref) =>
      new Errors.ResourceNotFound({ message: `Connection ${ref.name} not found in ${ref.organization}/${ref.environment}` })

    const insert = Effect.fn("SqlConnectionRepo.insert")(function*(record: Record) {
      const { keyIds, settings } = yield* sealed(record)
      const rows = yield* sql<{ readonly revision: number }>`
        INSERT INTO connections (organization, environment, name, type, settings, secret_key_ids, indexing_status,
          indexing_status_last_updated, indexing_progress, created_at, updated_at, revision)
        VALUES (${record.organization}, ${record.environment}, ${record.settings.name}, ${record.settings.type},
          ${settings}::jsonb, ${keyIds}::text[], ${record.indexingStatus}, ${isoOrNull(record.indexingStatusLastUpdated)}::timestamptz,
          ${JSON.stringify(record.indexingProgress)}::jsonb, ${iso(record.createdAt)}::timestamptz, ${iso(record.updatedAt)}::timestamptz, 0)
        RETURNING revision`.pipe(
        conflictOnUnique(`Connection ${record.settings.name} already exists in ${record.organization}/${record.environment}`)
      )
      // The stored row is the record just sealed: answer with it rather than opening the secrets again.
      return { ...record, revision: rows[0]?.revision ?? 0 }
    })

    const get = Effect.fn("SqlConnectionRepo.get")(function*(ref: Ref) {
      const rows = yield* Effect.orDie(sql<Row>`
        SELECT * FROM connections WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}`)
      const row = rows[0]
      if (row === undefined) return yield* notFound(ref)
      return yield* fromRow(row)
    })

    const list = Effect.fn("SqlConnectionRepo.list")(function*(env: { readonly organization: string; readonly environment: string }) {
      const rows = yield* Effect.orDie(sql<Row>`
        SELECT * FROM connections WHERE organization = ${env.organization} AND environment = ${env.environment} ORDER BY name`)
      return yield* Effect.forEach(rows, fromRow)
    })

    const save = Effect.fn("SqlConnectionRepo.save")(function*(record: Record) {
      const ref = ConnectionRepo.refOf(record)
      const { keyIds, settings } = yield* sealed(record)
      // Optimistic concurrency: the row changes only if nobody saved since it was read.
      const rows = yield* Effect.orDie(sql<{ readonly revision: number }>`
        UPDATE connections SET
          type = ${record.settings.type}, settings = ${settings}::jsonb, secret_key_ids = ${keyIds}::text[],
          indexing_status = ${record.indexingStatus},
          indexing_status_last_updated = ${isoOrNull(record.indexingStatusLastUpdated)}::timestamptz,
          indexing_progress = ${JSON.stringify(record.indexingProgress)}::jsonb,
          updated_at = ${iso(record.updatedAt)}::timestamptz, revision = revision + 1
        WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}
          AND revision = ${record.revision}
        RETURNING revision`)
      const row = rows[0]
      if (row !== undefined) return { ...record, revision: row.revision }
      yield* get(ref)
      return yield* new Errors.Conflict({
        message: `Connection ${ref.organization}/${ref.environment}/${ref.name} was changed by another request; read it again and retry`
      })
    })

    const remove = Effect.fn("SqlConnectionRepo.remove")(function*(ref: Ref) {
      const rows = yield* Effect.orDie(sql`
        DELETE FROM connections WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}
        RETURNING name`)
      if (rows.length === 0) return yield* notFound(ref)
    })

    return ConnectionRepo.ConnectionRepo.of({ insert, get, list, save, remove })
  })
)
