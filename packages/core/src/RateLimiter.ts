/**
 * The rate-limiting port: a fixed window of requests per key (the admin API uses
 * caller and route). The in-process layer suits one instance; several instances
 * share the PostgreSQL layer of `@modelgate/sql`, so a caller's budget is global.
 */
import { Clock, Config, Context, Effect, Layer, Ref } from "effect"

/** The decision for one request. */
export interface Decision {
  readonly allowed: boolean
  /** Seconds until the window resets (for Retry-After). */
  readonly retryAfterSeconds: number
}

/** Counts requests per key and window. */
export class RateLimiter extends Context.Service<RateLimiter, {
  readonly consume: (key: string) => Effect.Effect<Decision>
}>()("@modelgate/core/RateLimiter") {
  /** An in-process limiter: `limit` requests per `windowSeconds` per key. */
  static readonly layerMemory = (options: { readonly limit: number; readonly windowSeconds: number }) =>
    Layer.effect(
      RateLimiter,
      Effect.gen(function*() {
        const windows = yield* Ref.make(new Map<string, { readonly start: number; readonly count: number }>())
        const windowMillis = options.windowSeconds * 1000
        return RateLimiter.of({
          consume: (key) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Ref.modify(windows, (all) => {
                const start = now - (now % windowMillis)
                const current = all.get(key)
                const count = current !== undefined && current.start === start ? current.count + 1 : 1
                const next = new Map(all)
                // Old windows are dropped as keys come back; the map holds at most one window per key.
                next.set(key, { start, count })
                return [{ allowed: count <= options.limit, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMillis - now) / 1000)) }, next]
              }))
        })
      })
    )

  /** From `MODELGATE_RATE_LIMIT` (requests per minute per caller and route, default 600). */
  static readonly layerConfig = Layer.unwrap(
    Effect.map(Config.Int("MODELGATE_RATE_LIMIT").pipe(Config.withDefault(600)), (limit) => RateLimiter.layerMemory({ limit, windowSeconds: 60 }))
  )
}
