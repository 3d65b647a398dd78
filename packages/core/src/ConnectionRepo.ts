/**
 * The storage port of connections. A record holds the settings with secrets in
 * plaintext (adapters encrypt them at rest through SecretCipher), the indexing
 * state, and a revision for optimistic concurrency: `save` fails with CONFLICT
 * when another writer saved first, so no update is silently lost.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { ConnectionSettings } from "./Connection.ts"
import type { Conflict, ResourceNotFound } from "./Errors.ts"
import * as IndexingStatus from "./IndexingStatus.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"

/** Where a connection lives, and its name. */
export interface ConnectionRef {
  readonly organization: string
  readonly environment: string
  readonly name: string
}

/** A stored connection. */
export const ConnectionRecord = Schema.Struct({
  organization: Schema.String,
  environment: Schema.String,
  settings: ConnectionSettings,
  indexingStatus: IndexingStatus.IndexingStatus,
  indexingStatusLastUpdated: Schema.NullOr(Schema.DateTimeUtcFromString),
  indexingProgress: Schema.NullOr(IndexingStatus.ConnectionIndexingProgress),
  createdAt: Schema.DateTimeUtcFromString,
  updatedAt: Schema.DateTimeUtcFromString,
  revision: Schema.Int
}).annotate({ identifier: "ConnectionRecord" })
/** A stored connection. */
export type ConnectionRecord = typeof ConnectionRecord.Type

/** The ref of a stored connection. */
export const refOf = (record: ConnectionRecord): ConnectionRef => ({
  organization: record.organization,
  environment: record.environment,
  name: record.settings.name
})

/** Storage of connections. */
export class ConnectionRepo extends Context.Service<ConnectionRepo, {
  /** Stores a new connection (revision 0); CONFLICT when the name is taken in the environment. */
  readonly insert: (record: ConnectionRecord) => Effect.Effect<ConnectionRecord, Conflict>
  readonly get: (ref: ConnectionRef) => Effect.Effect<ConnectionRecord, ResourceNotFound>
  readonly list: (environment: { readonly organization: string; readonly environment: string }) => Effect.Effect<ReadonlyArray<ConnectionRecord>>
  /** Saves a record read at `record.revision`; CONFLICT if it changed since. Returns the new revision. */
  readonly save: (record: ConnectionRecord) => Effect.Effect<ConnectionRecord, Conflict | ResourceNotFound>
  readonly remove: (ref: ConnectionRef) => Effect.Effect<void, ResourceNotFound>
}>()("@modelgate/core/ConnectionRepo") {
  /** An in-memory repository. */
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    ConnectionRepo,
    Effect.gen(function*() {
      const key = (ref: ConnectionRef) => MemoryTable.keyOf(ref.organization, ref.environment, ref.name)
      const table = yield* MemoryTable.makeRevisioned<ConnectionRecord>((r) => key(refOf(r)), (k) => `Connection ${k}`)
      return ConnectionRepo.of({
        insert: table.insert,
        get: (ref) => table.get(key(ref)),
        list: (env) => table.list((r) => r.organization === env.organization && r.environment === env.environment),
        save: table.save,
        remove: (ref) => table.remove(key(ref))
      })
    })
  )
}
