/**
 * API keys for the MCP server, managed by their owners through the admin API:
 * create (the key is shown once; only its hash is stored), list, revoke. A
 * caller only ever sees and revokes its own keys.
 */
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import * as ApiKeys from "./ApiKeys.ts"
import { ResourceNotFound, ValidationError } from "./Errors.ts"
import type { Actor } from "./Roles.ts"
import { UserRepo } from "./UserRepo.ts"

/** An API key as its owner sees it (never the key, never its hash). */
export const ApiKeyView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  createdAt: Schema.DateTimeUtcFromString,
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromString),
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtcFromString)
}).annotate({ identifier: "ApiKey" })
/** An API key as its owner sees it. */
export type ApiKeyView = typeof ApiKeyView.Type

/** A new key: the view plus the key itself, shown this once. */
export const CreatedApiKey = Schema.Struct({ ...ApiKeyView.fields, key: Schema.String }).annotate({ identifier: "CreatedApiKey" })
/** A new key. */
export type CreatedApiKey = typeof CreatedApiKey.Type

const view = (k: { readonly id: string; readonly name: string; readonly createdAt: DateTime.Utc; readonly revokedAt: DateTime.Utc | null; readonly lastUsedAt: DateTime.Utc | null }): ApiKeyView => ({
  id: k.id,
  name: k.name,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
  lastUsedAt: k.lastUsedAt
})

/** API key operations of the caller. */
export class ApiKeyService extends Context.Service<ApiKeyService, {
  readonly create: (actor: Actor, name: string) => Effect.Effect<CreatedApiKey, ValidationError>
  readonly list: (actor: Actor) => Effect.Effect<ReadonlyArray<ApiKeyView>>
  readonly revoke: (actor: Actor, id: string) => Effect.Effect<ApiKeyView, ResourceNotFound>
}>()("@modelgate/core/ApiKeyService") {
  /** Over UserRepo. */
  static readonly layer = Layer.effect(
    ApiKeyService,
    Effect.gen(function*() {
      const users = yield* UserRepo

      // A caller known only from its token gets a user record on its first key.
      const ensureUser = Effect.fnUntraced(function*(actor: Actor) {
        const existing = yield* Effect.result(users.get(actor.userId))
        if (existing._tag === "Success") return
        const now = yield* DateTime.now
        yield* users.insert({ id: actor.userId, email: actor.email ?? `${actor.userId}@users.invalid`, createdAt: now }).pipe(
          Effect.catchTag("Conflict", () => Effect.void)
        )
      })

      const create = Effect.fn("ApiKeyService.create")(function*(actor: Actor, name: string) {
        const trimmed = name.trim()
        if (trimmed === "" || trimmed.length > 100) {
          return yield* new ValidationError({ message: "name is required: 1 to 100 characters" })
        }
        yield* ensureUser(actor)
        const key = ApiKeys.generate()
        const hash = ApiKeys.hash(key)
        const now = yield* DateTime.now
        const record = { id: `key_${hash.slice(7, 23)}`, userId: actor.userId, name: trimmed, hash, createdAt: now, revokedAt: null, lastUsedAt: null }
        yield* Effect.orDie(users.insertApiKey(record))
        return { ...view(record), key }
      })

      const list = Effect.fn("ApiKeyService.list")(function*(actor: Actor) {
        return (yield* users.listApiKeys(actor.userId)).map(view)
      })

      const revoke = Effect.fn("ApiKeyService.revoke")(function*(actor: Actor, id: string) {
        const owned = (yield* users.listApiKeys(actor.userId)).find((k) => k.id === id)
        if (owned === undefined) return yield* new ResourceNotFound({ message: `API key ${id} not found` })
        if (owned.revokedAt !== null) return view(owned)
        const revoked = { ...owned, revokedAt: yield* DateTime.now }
        return view(yield* users.saveApiKey(revoked))
      })

      return ApiKeyService.of({ create, list, revoke })
    })
  )
}
