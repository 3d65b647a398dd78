/**
 * UserRepo on PostgreSQL: users (unique by case-insensitive e-mail) and their
 * API keys, of which only a hash is stored.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, type Hierarchy, UserRepo } from "@modelgate/core"
import { conflictOnUnique, iso, isoOrNull, time, timeOrNull } from "./internal/rows.ts"

interface UserRow {
  readonly id: string
  readonly email: string
  readonly display_name: string | null
  readonly created_at: unknown
}

interface KeyRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly hash: string
  readonly created_at: unknown
  readonly revoked_at: unknown
  readonly last_used_at: unknown
}

const user = (row: UserRow): Hierarchy.User => ({
  id: row.id,
  email: row.email,
  ...(row.display_name === null ? {} : { displayName: row.display_name }),
  createdAt: time(row.created_at)
})

const apiKey = (row: KeyRow): Hierarchy.ApiKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  hash: row.hash,
  createdAt: time(row.created_at),
  revokedAt: timeOrNull(row.revoked_at),
  lastUsedAt: timeOrNull(row.last_used_at)
})

/** UserRepo over SqlClient. */
export const layer = Layer.effect(
  UserRepo.UserRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return UserRepo.UserRepo.of({
      insert: (u) =>
        sql`INSERT INTO users (id, email, display_name, created_at)
            VALUES (${u.id}, ${u.email}, ${u.displayName ?? null}, ${iso(u.createdAt)}::timestamptz)`
          .pipe(conflictOnUnique(`A user with id ${u.id} or e-mail ${u.email} already exists`), Effect.as(u)),
      get: (id) =>
        Effect.orDie(sql<UserRow>`SELECT * FROM users WHERE id = ${id}`).pipe(
          Effect.flatMap((rows) =>
            rows[0] === undefined ? Effect.fail(new Errors.ResourceNotFound({ message: `User ${id} not found` })) : Effect.succeed(user(rows[0]))
          )
        ),
      findByEmail: (email) =>
        Effect.orDie(sql<UserRow>`SELECT * FROM users WHERE lower(email) = lower(${email})`).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : user(rows[0])))
        ),
      insertApiKey: (k) =>
        sql`INSERT INTO api_keys (id, user_id, name, hash, created_at, revoked_at, last_used_at)
            VALUES (${k.id}, ${k.userId}, ${k.name}, ${k.hash}, ${iso(k.createdAt)}::timestamptz,
              ${isoOrNull(k.revokedAt)}::timestamptz, ${isoOrNull(k.lastUsedAt)}::timestamptz)`
          .pipe(conflictOnUnique(`API key ${k.id} already exists`), Effect.as(k)),
      findApiKeyByHash: (hash) =>
        Effect.orDie(sql<KeyRow>`SELECT * FROM api_keys WHERE hash = ${hash}`).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : apiKey(rows[0])))
        ),
      listApiKeys: (userId) =>
        Effect.orDie(sql<KeyRow>`SELECT * FROM api_keys WHERE user_id = ${userId} ORDER BY created_at, id`).pipe(
          Effect.map((rows) => rows.map(apiKey))
        ),
      saveApiKey: (k) =>
        Effect.orDie(sql`
          UPDATE api_keys SET name = ${k.name}, revoked_at = ${isoOrNull(k.revokedAt)}::timestamptz,
            last_used_at = ${isoOrNull(k.lastUsedAt)}::timestamptz
          WHERE id = ${k.id} RETURNING id`).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(new Errors.ResourceNotFound({ message: `API key ${k.id} not found` })) : Effect.succeed(k)
          )
        )
    })
  })
)
