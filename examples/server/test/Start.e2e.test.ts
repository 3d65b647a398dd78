import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { freePort } from "./TestServer.ts"

const main = resolve(import.meta.dirname, "../src/main.ts")

describe("the example server process", () => {
  it.live("starts on embedded defaults: /health at once, /ready 503 until the seed is loaded, then its URLs and a token; exits 0 on SIGTERM", () =>
    Effect.gen(function*() {
      const port = yield* freePort()
      const dataDir = mkdtempSync(join(tmpdir(), "modelgate-start-"))
      const child = spawn(process.execPath, ["--conditions=@modelgate/source", main], {
        env: { ...process.env, PORT: String(port), MODELGATE_DATA_DIR: dataDir, DATABASE_URL: "" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
      let token = ""
      const printed = Effect.promise(() =>
        new Promise<string>((done, fail) => {
          createInterface({ input: child.stdout }).on("line", (line) => {
            const match = /^\s+token:\s+(\S+)$/.exec(line)
            if (match?.[1] !== undefined) token = match[1]
            const key = /^\s+API key:\s+(\S+)/.exec(line)
            if (key?.[1] !== undefined) done(key[1])
          })
          child.on("exit", (code) => fail(new Error(`exited early with ${code}`)))
        })
      )
      // Liveness comes first: /health answers while storage opens (initdb of a fresh directory takes
      // seconds) and the seed loads; meanwhile /ready and the API answer 503 with the reason.
      const key = yield* Effect.forkChild(printed)
      let live = 0
      while (live !== 200) {
        live = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status, () => 0))
        if (live !== 200) yield* Effect.sleep("20 millis")
      }
      const starting = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/ready`))
      assert.strictEqual(starting.status, 503)
      const reason = (yield* Effect.promise(() => starting.json())) as { status: string; reason: string }
      assert.strictEqual(reason.status, "starting")
      assert.match(reason.reason, /^The server is starting: /)
      const early = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/api/v0/organizations/demo/environments/demo/connections`))
      assert.strictEqual(early.status, 503)
      assert.strictEqual(early.headers.get("retry-after"), "1")
      assert.strictEqual(((yield* Effect.promise(() => early.json())) as { code: string }).code, "INTERNAL_ERROR")
      const apiKey = yield* Fiber.join(key)
      const ready = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/ready`))
      assert.strictEqual(ready.status, 200)
      const health = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/health`))
      assert.strictEqual(health.status, 200)
      const connections = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/api/v0/organizations/demo/environments/demo/connections`, { headers: { authorization: `Bearer ${token}` } })
      )
      assert.strictEqual(connections.status, 200)
      // The printed API key opens the MCP server; its plaintext is kept owner-only in the data directory.
      const mcp = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: "POST",
          headers: { authorization: `ApiKey ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "start", version: "0" } } })
        })
      )
      assert.strictEqual(mcp.status, 200)
      assert.strictEqual(statSync(join(dataDir, "api-key")).mode & 0o777, 0o600)
      child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => exited), 0)
    }), 120_000)
})
