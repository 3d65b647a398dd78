import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
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
      const token = yield* Effect.promise(() =>
        new Promise<string>((done, fail) => {
          createInterface({ input: child.stdout }).on("line", (line) => {
            const match = /^\s+token:\s+(\S+)$/.exec(line)
            if (match?.[1] !== undefined) done(match[1])
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
      child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => exited), 0)
    }), 120_000)
})
