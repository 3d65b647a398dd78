/**
 * RateLimiter on PostgreSQL, for several instances behind a load balancer: one
 * row per key and window, counted with an atomic upsert, so every instance sees
 * the same budget. Old windows are removed as new ones open.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { RateLimiter } from "@modelgate/core"

/** A shared limiter: `limit` requests per `windowSeconds` per key. */
export const layer = (options: { readonly limit: number; readonly windowSeconds: number }) =>
  Layer.effect(
    RateLimiter.RateLimiter,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const windowMillis = options.windowSeconds * 1000
      return RateLimiter.RateLimiter.of({
        consume: (key) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const start = now - (now % windowMillis)
            const rows = yield* sql<{ readonly count: number }>`
              INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, ${start}, 1)
              ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1
              RETURNING count`
            // Housekeeping, now and then: windows older than the previous one are useless.
            if (now % 97 === 0) yield* sql`DELETE FROM rate_limits WHERE window_start < ${start - windowMillis}`
            const count = rows[0]?.count ?? 1
            return { allowed: count <= options.limit, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMillis - now) / 1000)) }
          }).pipe(Effect.orDie, Effect.withSpan("SqlRateLimiter.consume"))
      })
    })
  )
