import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { ConnectionRepo, PackageRepo, SecretCipher, VersionRepo } from "@modelgate/core"
import { Pglite, Storage } from "@modelgate/sql"
import { freshServerDatabase, serverUrl } from "./TestDatabase.ts"

const writer = join(import.meta.dirname, "fixtures/crash-writer.ts")
const cipher = SecretCipher.SecretCipher.layerAesGcm({ keys: new Map([["crash", new Uint8Array(32).fill(7)]]), current: "crash" })

/** Runs the writer until it has acknowledged `acks` writes, then SIGKILLs it; returns the last acknowledged index. */
const writeThenKill = (args: ReadonlyArray<string>, acks: number) =>
  Effect.callback<number, Error>((resume) => {
    const child = spawn(process.execPath, ["--conditions=@modelgate/source", writer, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let last = -1
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    createInterface({ input: child.stdout }).on("line", (line) => {
      const match = /^ack (\d+)$/.exec(line)
      if (match?.[1] === undefined) return
      last = Number(match[1])
      if (last + 1 >= acks) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resume(Effect.succeed(last))
      else resume(Effect.fail(new Error(`writer exited early (code ${code}): ${stderr}`)))
    })
  })

/** After reopening: every acknowledged write is present, whole, and the invariants hold. */
const verify = (organization: string, lastAck: number) =>
  Effect.gen(function*() {
    const connections = yield* ConnectionRepo.ConnectionRepo
    const versions = yield* VersionRepo.VersionRepo
    const packages = yield* PackageRepo.PackageRepo
    const stored = yield* connections.list({ organization, environment: "prod" })
    const names = new Set(stored.map((c) => c.settings.name))
    for (let i = 0; i <= lastAck; i++) assert.isTrue(names.has(`c${i}`), `acknowledged connection c${i} is missing`)
    // Every stored connection is whole: its settings decode and its secrets open.
    for (const c of stored) {
      const i = c.settings.name.slice(1)
      assert.strictEqual(c.settings.postgresConnection?.password, `secret-${i}`)
    }
    const all = yield* versions.list({ organization, environment: "prod", package: "sales" })
    assert.isAtLeast(all.length, lastAck + 1)
    const pkg = yield* packages.get({ organization, environment: "prod", package: "sales" })
    // The latest pointer names a stored version, and is at least the last acknowledged one.
    assert.isTrue(all.some((v) => v.id === pkg.latestVersionId))
    assert.isAtLeast(Number(pkg.latestVersionId?.split(".")[2]), lastAck)
  })

describe("crash safety", () => {
  it.live("PGlite data directory: acknowledged writes survive SIGKILL, no partial aggregate", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "modelgate-crash-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const lastAck = yield* writeThenKill(["pglite", dir, "crashorg"], 25)
      assert.isAtLeast(lastAck, 24)
      yield* verify("crashorg", lastAck).pipe(
        Effect.provide(Storage.layer.pipe(Layer.provideMerge(cipher), Layer.provideMerge(Pglite.layer({ dataDir: dir }))))
      )
    }).pipe(Effect.scoped), 120_000)

  if (serverUrl !== undefined) {
    const url = serverUrl
    it.live("PostgreSQL server: acknowledged writes survive SIGKILL of the writer, no partial aggregate", () =>
      Effect.gen(function*() {
        const db = yield* freshServerDatabase(url)
        const lastAck = yield* writeThenKill(["postgres", db.url, "crashorg"], 40)
        assert.isAtLeast(lastAck, 39)
        yield* verify("crashorg", lastAck).pipe(
          Effect.provide(Storage.layer.pipe(Layer.provideMerge(cipher), Layer.provideMerge(Storage.layerPostgres({ url: Redacted.make(db.url) }))))
        )
      }).pipe(Effect.scoped), 120_000)
  }
})
