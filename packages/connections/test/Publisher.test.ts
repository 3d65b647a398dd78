/**
 * The Publisher tester against a tiny HTTP server started by the test: 200 for
 * the right bearer token on the connection resource, 401 otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Connection } from "@modelgate/core"
import { Effect } from "effect"
import * as Http from "node:http"
import * as Testers from "../src/Testers.ts"
import { closedPort } from "./Servers.ts"

const options = { connectTimeoutMillis: 5_000 }
const token = "token-abc-123"
const path = "/api/v0/environments/prod/connections/warehouse"

/** A fake Publisher, stopped when the scope closes; it records the paths it was asked for. */
const fakePublisher = Effect.acquireRelease(
  Effect.callback<{ readonly server: Http.Server; readonly port: number; readonly seen: Array<string> }>((resume) => {
    const seen: Array<string> = []
    const server = Http.createServer((request, response) => {
      seen.push(request.url ?? "")
      const authorized = request.headers.authorization === `Bearer ${token}`
      response.statusCode = !authorized ? 401 : request.url === path ? 200 : 404
      response.setHeader("content-type", "application/json")
      response.end(authorized ? JSON.stringify({ name: "warehouse", type: "postgres" }) : JSON.stringify({ message: "unauthorized" }))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed({ server, port: address !== null && typeof address === "object" ? address.port : 0, seen }))
    })
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const publisher = (publisherConnection: Connection.PublisherConnection): Connection.ConnectionSettings => ({
  name: "pub",
  type: "publisher",
  excludeAllTables: false,
  publisherConnection
})

describe("PublisherTester", () => {
  it.live("passes when the remote answers the connection URI for the bearer token", () =>
    Effect.gen(function*() {
      const remote = yield* fakePublisher
      const report = yield* Testers.test(
        publisher({ connectionUri: `http://127.0.0.1:${remote.port}${path}`, accessToken: token }),
        options
      )
      assert.isAtLeast(report.elapsedMillis, 0)
      assert.deepStrictEqual(remote.seen, [path])
    }))

  it.live("a wrong or missing token fails at remote with the status, never the token", () =>
    Effect.gen(function*() {
      const remote = yield* fakePublisher
      const wrong = yield* Effect.flip(Testers.test(
        publisher({ connectionUri: `http://127.0.0.1:${remote.port}${path}`, accessToken: "token-wrong-999" }),
        options
      ))
      assert.strictEqual(wrong.step, "remote")
      assert.include(wrong.message, `http://127.0.0.1:${remote.port}${path} answered HTTP 401`)
      assert.notInclude(wrong.message, "token-wrong-999")
      const missing = yield* Effect.flip(Testers.test(publisher({ connectionUri: `http://127.0.0.1:${remote.port}${path}` }), options))
      assert.strictEqual(missing.step, "remote")
      assert.include(missing.message, "HTTP 401")
    }))

  it.live("an unknown remote connection fails at remote with 404", () =>
    Effect.gen(function*() {
      const remote = yield* fakePublisher
      const error = yield* Effect.flip(Testers.test(
        publisher({ connectionUri: `http://127.0.0.1:${remote.port}/api/v0/environments/prod/connections/nope`, accessToken: token }),
        options
      ))
      assert.strictEqual(error.step, "remote")
      assert.include(error.message, "HTTP 404")
    }))

  it.live("an unreachable remote fails at connect", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* Effect.flip(Testers.test(publisher({ connectionUri: `http://127.0.0.1:${port}${path}`, accessToken: token }), options))
      assert.strictEqual(error.step, "connect")
      assert.include(error.message, `cannot reach 127.0.0.1:${port}: connection refused`)
    }))
})
