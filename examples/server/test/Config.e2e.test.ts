import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const main = resolve(import.meta.dirname, "../src/main.ts")

/** Runs the server with `env` on top of a clean configuration; resolves with its exit code and stderr. */
const run = (env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly stderr: string }>((done) => {
      const child = spawn(process.execPath, ["--conditions=@modelgate/source", main], {
        env: { PATH: process.env["PATH"] ?? "", PORT: "65001", MODELGATE_DATA_DIR: mkdtempSync(join(tmpdir(), "modelgate-config-")), ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
      })
      // A server that starts despite the bad value would keep running: stop it, the test fails below.
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        done({ code, stderr })
      })
    })
  )

const key = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)))

describe("configuration of the example server process", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["a port that is not a number", { PORT: "abc" }, "PORT"],
    ["a negative rate limit", { MODELGATE_RATE_LIMIT: "-1" }, "MODELGATE_RATE_LIMIT"],
    ["malformed secret keys", { MODELGATE_SECRET_KEYS: "not-a-keyring" }, "MODELGATE_SECRET_KEYS"],
    ["a PostgreSQL server without secret keys", { DATABASE_URL: "postgres://localhost:1/none" }, "MODELGATE_SECRET_KEYS"],
    ["an unknown log format", { MODELGATE_LOG_FORMAT: "xml" }, "MODELGATE_LOG_FORMAT"],
    ["an unknown log level", { MODELGATE_LOG_LEVEL: "Loud" }, "MODELGATE_LOG_LEVEL"],
    ["an OTLP endpoint that is not a URL", { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"]
  ]
  for (const [what, env, variable] of cases) {
    it.live(`${what} stops start-up with exit code 1, naming ${variable}`, () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* run(env)
        assert.strictEqual(code, 1, stderr)
        assert.include(stderr, `modelgate: invalid configuration: `)
        assert.include(stderr, variable)
      }), 90_000)
  }

  it.live("well-formed secret keys pass the check (the server starts)", () =>
    Effect.gen(function*() {
      // A valid keyring with an invalid port: start-up gets past the keys and stops at PORT.
      const { code, stderr } = yield* run({ MODELGATE_SECRET_KEYS: `*k1=${key}`, PORT: "70000" })
      assert.strictEqual(code, 1)
      assert.notInclude(stderr, "MODELGATE_SECRET_KEYS")
      assert.include(stderr, "PORT")
    }), 90_000)
})
