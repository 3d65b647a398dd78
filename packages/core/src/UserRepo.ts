/**
 * The storage port of users and their API keys. API keys are stored as hashes
 * only; the key itself is shown once when it is created.
 */
import { Context, Effect, Layer } from "effect"
import { Conflict, type ResourceNotFound } from "./Errors.ts"
import type { ApiKey, User } from "./Hierarchy.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"

/** Storage of users and API keys. */
export class UserRepo extends Context.Service<UserRepo, {
  readonly insert: (user: User) => Effect.Effect<User, Conflict>
  readonly get: (id: string) => Effect.Effect<User, ResourceNotFound>
  /** The user with this address, compared case-insensitively. */
  readonly findByEmail: (email: string) => Effect.Effect<User | undefined>
  readonly insertApiKey: (key: ApiKey) => Effect.Effect<ApiKey, Conflict>
  readonly findApiKeyByHash: (hash: string) => Effect.Effect<ApiKey | undefined>
  readonly listApiKeys: (userId: string) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Replaces a key record (revocation, last use). */
  readonly saveApiKey: (key: ApiKey) => Effect.Effect<ApiKey, ResourceNotFound>
}>()("@modelgate/core/UserRepo") {
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    UserRepo,
    Effect.gen(function*() {
      const users = yield* MemoryTable.make<User>((u) => u.id, (k) => `User ${k}`)
      const keys = yield* MemoryTable.make<ApiKey>((k) => k.id, (k) => `API key ${k}`)
      return UserRepo.of({
        // One user per address, compared case-insensitively (as the SQL adapter's unique index).
        insert: (user) =>
          Effect.flatMap(users.list((u) => u.email.toLowerCase() === user.email.toLowerCase()), (same) =>
            same.length === 0
              ? users.insert(user)
              : Effect.fail(new Conflict({ message: `A user with e-mail ${user.email} already exists` }))),
        get: users.get,
        findByEmail: (email) => Effect.map(users.list((u) => u.email.toLowerCase() === email.toLowerCase()), (found) => found[0]),
        insertApiKey: keys.insert,
        findApiKeyByHash: (hash) => Effect.map(keys.list((k) => k.hash === hash), (found) => found[0]),
        listApiKeys: (userId) => keys.list((k) => k.userId === userId),
        saveApiKey: (key) => Effect.flatMap(keys.get(key.id), () => keys.upsert(key))
      })
    })
  )
}
