import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { RateLimiter, SecretCipher } from "@modelgate/core"
import { SqlRateLimiter, Storage } from "@modelgate/sql"
import { freshServerDatabase, pgliteClient, serverUrl } from "./TestDatabase.ts"

const limiter = { limit: 3, windowSeconds: 60 }

const contract = (name: string, layer: Layer.Layer<RateLimiter.RateLimiter, unknown>) =>
  it.effect(`${name}: the limit holds per key and window`, () =>
    Effect.gen(function*() {
      const rl = yield* RateLimiter.RateLimiter
      const a = yield* Effect.forEach([1, 2, 3, 4], () => rl.consume("user:a GET"))
      assert.deepStrictEqual(a.map((d) => d.allowed), [true, true, true, false])
      assert.isAtLeast(a[3]?.retryAfterSeconds ?? 0, 1)
      assert.isTrue((yield* rl.consume("user:b GET")).allowed)
    }).pipe(Effect.provide(layer)))

const migrated = <E>(client: Layer.Layer<import("effect/sql/SqlClient").SqlClient, E>) =>
  Storage.layer.pipe(Layer.provide(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(client))

describe("RateLimiter", () => {
  contract("memory", RateLimiter.RateLimiter.layerMemory(limiter))
  contract("PostgreSQL (PGlite)", SqlRateLimiter.layer(limiter).pipe(Layer.provide(migrated(pgliteClient))))

  if (serverUrl !== undefined) {
    const url = serverUrl
    it.effect("PostgreSQL server: two instances share one budget", () =>
      Effect.gen(function*() {
        const db = yield* freshServerDatabase(url)
        const instance = () => SqlRateLimiter.layer(limiter).pipe(Layer.provide(migrated(Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 2 }))))
        const one = yield* Layer.build(instance())
        const two = yield* Layer.build(instance())
        const first = yield* Effect.forEach([1, 2], () => Effect.flatMap(RateLimiter.RateLimiter, (rl) => rl.consume("user:x POST")).pipe(Effect.provideContext(one)))
        const second = yield* Effect.forEach([1, 2], () => Effect.flatMap(RateLimiter.RateLimiter, (rl) => rl.consume("user:x POST")).pipe(Effect.provideContext(two)))
        assert.deepStrictEqual([...first, ...second].map((d) => d.allowed), [true, true, true, false])
      }).pipe(Effect.scoped), 60_000)
  }
})
