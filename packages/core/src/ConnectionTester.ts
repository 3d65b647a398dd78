/**
 * The port that tests a connection before it is saved: the adapters open a real
 * session to the target (through the SSH proxy when one is set) and run a trivial
 * query. A failure names the step that failed (proxy, connect, authenticate,
 * query) and never includes a secret.
 */
import { Context, Effect, Layer } from "effect"
import type { ConnectionSettings } from "./Connection.ts"
import { ConnectionTestFailed } from "./Errors.ts"

/** What a successful test learned. */
export interface TestReport {
  /** The server's self-description, when it gives one (for example its version). */
  readonly serverVersion?: string
  readonly elapsedMillis: number
}

/** Tests connection settings against their target. */
export class ConnectionTester extends Context.Service<ConnectionTester, {
  readonly test: (settings: ConnectionSettings) => Effect.Effect<TestReport, ConnectionTestFailed>
}>()("@modelgate/core/ConnectionTester") {
  /**
   * An in-memory tester for unit tests: `outcome` decides per connection. The
   * default accepts every connection.
   */
  static readonly layerMemoryWith = (
    outcome: (settings: ConnectionSettings) => { readonly ok: true } | { readonly ok: false; readonly step: string; readonly message: string }
  ) =>
    Layer.succeed(
      ConnectionTester,
      ConnectionTester.of({
        test: (settings) => {
          const result = outcome(settings)
          return result.ok
            ? Effect.succeed({ elapsedMillis: 0 })
            : Effect.fail(new ConnectionTestFailed({ step: result.step, message: `Connection test failed at ${result.step}: ${result.message}` }))
        }
      })
    )

  /** An in-memory tester that accepts every connection. */
  static readonly layerMemory = ConnectionTester.layerMemoryWith(() => ({ ok: true }))
}
