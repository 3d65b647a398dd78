/**
 * The tester layer from configuration: the connect timeout and the direct
 * PostgreSQL TLS mode are read once, and a bad value fails the layer.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConnectionTester } from "@modelgate/core"
import { ConfigProvider, Effect, Layer } from "effect"
import * as Testers from "../src/Testers.ts"

const withEnv = (env: Record<string, string>) =>
  Testers.layerConfig.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

describe("Testers.layerConfig", () => {
  it.live("provides the ConnectionTester from the environment (defaults apply)", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectionTester.ConnectionTester
      const report = yield* tester.test({ name: "duck", type: "duckdb", excludeAllTables: false })
      assert.match(report.serverVersion ?? "", /^DuckDB/)
    }).pipe(Effect.provide(withEnv({}))))

  it.live("a settings object missing for its type fails at settings", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectionTester.ConnectionTester
      const error = yield* Effect.flip(tester.test({ name: "pg", type: "postgres", excludeAllTables: false }))
      assert.strictEqual(error.step, "settings")
      assert.include(error.message, "postgresConnection is required")
    }).pipe(Effect.provide(withEnv({ MODELGATE_CONNECT_TIMEOUT_MS: "2500", MODELGATE_POSTGRES_TLS: "require" }))))

  it.live("an invalid TLS mode or timeout fails the layer", () =>
    Effect.gen(function*() {
      const tls = yield* Effect.flip(Layer.build(withEnv({ MODELGATE_POSTGRES_TLS: "sometimes" })).pipe(Effect.scoped))
      assert.strictEqual(tls._tag, "ConfigError")
      const timeout = yield* Effect.flip(Layer.build(withEnv({ MODELGATE_CONNECT_TIMEOUT_MS: "soon" })).pipe(Effect.scoped))
      assert.strictEqual(timeout._tag, "ConfigError")
    }))
})
