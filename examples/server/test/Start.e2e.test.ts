import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { freePort } from "./TestServer.ts"

const main = resolve(import.meta.dirname, "../src/main.ts")

describe("the example server process", () => {
  it.live("starts on embedded defaults, prints its URLs and a token, serves /health, and exits 0 on SIGTERM", () =>
    Effect.gen(function*() {
      const port = yield* freePort()
      const dataDir = mkdtempSync(join(tmpdir(), "modelgate-start-"))
      const child = spawn(process.execPath, ["--conditions=@modelgate/source", main], {
        env: { ...process.env, PORT: String(port), MODELGATE_DATA_DIR: dataDir, DATABASE_URL: "" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
      let token = ""
      const apiKey = yield* Effect.promise(() =>
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
