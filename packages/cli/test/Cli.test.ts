/**
 * The `modelgate` CLI as an operator runs it: a child process per command, against a
 * temporary PGlite data directory and, when DATABASE_URL is set, a fresh database
 * on that PostgreSQL server. What a command claims is checked by reading the storage
 * back in this process, through the same storage selection the CLI uses.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { ApiKeys, ConnectionService, ConnectionTester, PackageRepo, UserRepo } from "@modelgate/core"
import { AdminServer, TokenVerifier } from "@modelgate/http"
import { ScratchDatabase } from "@modelgate/sql"
import { Seed, Store } from "../src/index.ts"

const bin = resolve(import.meta.dirname, "../src/bin/modelgate.ts")
const flights = resolve(import.meta.dirname, "../../../examples/server/demo/packages/flights")

type Env = Readonly<Record<string, string>>

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

// The variables the CLI reads come from the test alone, never from the shell that runs it.
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k !== "DATABASE_URL" && !k.startsWith("MODELGATE_"))
)

/** Runs `modelgate <args>` with `env`, to its exit. */
const cli = (args: ReadonlyArray<string>, env: Env): Promise<Ran> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--conditions=@modelgate/source", bin, ...args], {
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

/** Runs an effect on the CLI's storage selection for `env`, in this process (the CLI must not be running). */
const inStore = <A, E>(env: Env, effect: Effect.Effect<A, E, AdminServer.Services | Store.Layers>) =>
  Effect.runPromise(effect.pipe(
    Effect.provide(AdminServer.layerServices.pipe(
      // Connections are stored without a real test, so a secret can be sealed offline.
      Layer.provideMerge(ConnectionTester.ConnectionTester.layerMemory),
      Layer.provideMerge(Store.layerStorage),
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { ...env } })))
    ))
  ))

const key = (byte: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(byte)))
const oldKey = key(1)
const newKey = key(2)
const jwtSecret = "a-test-secret-of-at-least-32-characters!"

const seedFile = (dir: string) => {
  const path = join(dir, "seed.json")
  writeFileSync(path, JSON.stringify({
    users: [{ id: "ada", email: "ada@example.com" }],
    groups: [{ name: "analysts", members: ["ada"] }],
    organizations: [{
      name: "acme",
      grants: [{ userGroupId: "user:ada", permission: "admin" }],
      environments: [{
        name: "prod",
        connections: [{ name: "duckdb", type: "duckdb" }],
        packages: [{ name: "flights", description: "US flights" }]
      }]
    }]
  }))
  return path
}

const backends: Array<{ readonly name: string; readonly embedded: boolean; readonly env: () => Promise<Env> }> = [
  {
    name: "embedded PGlite",
    embedded: true,
    env: async () => ({ MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), "modelgate-cli-")), "data") })
  }
]
const serverUrl = process.env["DATABASE_URL"]
const scopes: Array<Scope.Closeable> = []
if (serverUrl !== undefined && serverUrl !== "") {
  backends.push({
    name: "PostgreSQL server",
    embedded: false,
    env: async () => {
      const scope = Effect.runSync(Scope.make())
      scopes.push(scope)
      const db = await Effect.runPromise(Scope.provide(ScratchDatabase.make(serverUrl, "modelgate_cli"), scope))
      return {
        DATABASE_URL: db.url,
        MODELGATE_SECRET_KEYS: `*old=${oldKey}`,
        MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), "modelgate-cli-")), "data")
      }
    }
  })
}
afterAll(() => Promise.all(scopes.map((scope) => Effect.runPromise(Scope.close(scope, Exit.void)))))

for (const backend of backends) {
  describe(`modelgate on ${backend.name}`, () => {
    let env: Env = {}
    let work = ""
    beforeAll(async () => {
      env = await backend.env()
      work = mkdtempSync(join(tmpdir(), "modelgate-cli-work-"))
    })

    it("migrates, and a second run finds the schema up to date", async () => {
      const first = await cli(["migrate"], env)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.match(first.stdout, /^Applied \d+ migration\(s\): 1_initial/)
      assert.match(first.stdout, /1_connection_indexes/)
      const second = await cli(["migrate"], env)
      assert.strictEqual(second.code, 0, second.stderr)
      assert.match(second.stdout, /up to date/)
    }, 60_000)

    it("loads a seed, twice without change", async () => {
      const path = seedFile(work)
      for (let i = 0; i < 2; i++) {
        const ran = await cli(["seed", path], env)
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.match(ran.stdout, /Loaded the seed .*: 1 organization\(s\), default acme/)
      }
      const users = await inStore(env, Effect.flatMap(UserRepo.UserRepo, (repo) => repo.get("ada")))
      assert.strictEqual(users.email, "ada@example.com")
    }, 90_000)

    it("publishes a package folder and makes it the latest; a version is published once", async () => {
      const args = ["publish", flights, "--org", "acme", "--env", "prod", "--package", "flights", "--version", "1.0.0"]
      const published = await cli([...args, "--latest"], env)
      assert.strictEqual(published.code, 0, published.stderr)
      assert.match(published.stdout, /Published acme\/prod\/flights version 1\.0\.0/)
      assert.match(published.stdout, /1\.0\.0 is now the latest/)
      const pkg = await inStore(env, Effect.flatMap(PackageRepo.PackageRepo, (repo) => repo.get({ organization: "acme", environment: "prod", package: "flights" })))
      assert.strictEqual(pkg.latestVersionId, "1.0.0")

      const again = await cli(args, env)
      assert.strictEqual(again.code, 1)
      assert.match(again.stderr, /Version 1\.0\.0 of Package flights in acme\/prod already exists/)
      const missing = await cli(["publish", flights, "--org", "acme", "--env", "prod", "--package", "nope", "--version", "1.0.0"], env)
      assert.strictEqual(missing.code, 1)
      assert.match(missing.stderr, /Package nope not found in acme\/prod/)
      const badVersion = await cli(["publish", flights, "--org", "acme", "--env", "prod", "--package", "flights", "--version", "one"], env)
      assert.strictEqual(badVersion.code, 1)
      assert.match(badVersion.stderr, /Invalid version id "one"/)
    }, 120_000)

    it("mints a token the HS256 verifier accepts, alone on stdout", async () => {
      const none = await cli(["token", "--sub", "ada"], env)
      assert.strictEqual(none.code, 1)
      assert.match(none.stderr, /No JWT secret: set MODELGATE_JWT_SECRET/)

      const ran = await cli(["token", "--sub", "ada", "--email", "ada@example.com", "--issuer", "mg", "--audience", "admin", "--ttl", "2h"], {
        ...env,
        MODELGATE_JWT_SECRET: jwtSecret
      })
      assert.strictEqual(ran.code, 0, ran.stderr)
      const token = ran.stdout.trim()
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
      assert.notInclude(ran.stderr, jwtSecret)
      const verify = (audience: string, secret = jwtSecret) =>
        Effect.runPromiseExit(Effect.flatMap(TokenVerifier.TokenVerifier, (v) => v.verify(token)).pipe(
          Effect.provide(TokenVerifier.TokenVerifier.layerHs256({ secret: Redacted.make(secret), issuer: "mg", audience }))
        ))
      const accepted = await verify("admin")
      assert.isTrue(Exit.isSuccess(accepted))
      if (Exit.isSuccess(accepted)) {
        assert.strictEqual(accepted.value.userId, "ada")
        assert.strictEqual(accepted.value.email, "ada@example.com")
      }
      assert.isTrue(Exit.isFailure(await verify("mcp")))
      assert.isTrue(Exit.isFailure(await verify("admin", `${jwtSecret}x`)))
      const payload: unknown = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString())
      assert.isTrue(typeof payload === "object" && payload !== null && "exp" in payload && "iat" in payload)
      if (typeof payload === "object" && payload !== null && "exp" in payload && "iat" in payload) {
        assert.strictEqual(Number(payload.exp) - Number(payload.iat), 7200)
      }

      // Without the variable, the data directory's jwt-secret (the server's) signs.
      const dataDir = env["MODELGATE_DATA_DIR"] ?? ""
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(join(dataDir, "jwt-secret"), "the-data-directory-secret-0123456789\n")
      const fromFile = await cli(["token", "--sub", "grace"], env)
      assert.strictEqual(fromFile.code, 0, fromFile.stderr)
      const actor = await Effect.runPromise(Effect.flatMap(TokenVerifier.TokenVerifier, (v) => v.verify(fromFile.stdout.trim())).pipe(
        Effect.provide(TokenVerifier.TokenVerifier.layerHs256({ secret: Redacted.make("the-data-directory-secret-0123456789") }))
      ))
      assert.strictEqual(actor.userId, "grace")

      const badTtl = await cli(["token", "--sub", "ada", "--ttl", "2x"], env)
      assert.strictEqual(badTtl.code, 1)
      assert.match(badTtl.stderr, /--ttl/)
    }, 60_000)

    it("creates an API key shown once, lists keys without it, revokes by id", async () => {
      const created = await cli(["api-key", "create", "--user", "ada", "--name", "laptop"], env)
      assert.strictEqual(created.code, 0, created.stderr)
      const apiKey = created.stdout.trim()
      assert.match(apiKey, /^mg_[\w-]{40,}$/)
      const id = /API key (key_\w+)/.exec(created.stderr)?.[1]
      assert.isDefined(id)
      const stored = await inStore(env, Effect.flatMap(UserRepo.UserRepo, (repo) => repo.findApiKeyByHash(ApiKeys.hash(apiKey))))
      assert.strictEqual(stored?.id, id)
      assert.strictEqual(stored?.revokedAt, null)

      const listed = await cli(["api-key", "list", "--user", "ada"], env)
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.include(listed.stdout, `${id}\tlaptop\t`)
      assert.notInclude(listed.stdout + listed.stderr, apiKey)
      assert.notInclude(listed.stdout, "sha256")
      const json = await cli(["api-key", "list", "--user", "ada", "--json"], env)
      const parsed: unknown = JSON.parse(json.stdout)
      assert.deepStrictEqual(Array.isArray(parsed) ? parsed.map((k: { id: string; revokedAt: unknown }) => [k.id, k.revokedAt]) : parsed, [[id, null]])

      const revoked = await cli(["api-key", "revoke", id ?? ""], env)
      assert.strictEqual(revoked.code, 0, revoked.stderr)
      assert.strictEqual(revoked.stdout.trim(), `Revoked API key ${id} of user ada`)
      const after = await inStore(env, Effect.flatMap(UserRepo.UserRepo, (repo) => repo.findApiKeyByHash(ApiKeys.hash(apiKey))))
      assert.isNotNull(after?.revokedAt)
      const twice = await cli(["api-key", "revoke", id ?? ""], env)
      assert.strictEqual(twice.code, 0, twice.stderr)
      assert.match(twice.stdout, /was already revoked/)
      const unknown = await cli(["api-key", "revoke", "key_nope"], env)
      assert.strictEqual(unknown.code, 1)
      assert.match(unknown.stderr, /No API key with id key_nope/)
    }, 90_000)

    it("re-encrypts stored secrets under the current key after a rotation", async () => {
      // A connection with a password, sealed with the key `old` (stored without a live test).
      const withOld = { ...env, MODELGATE_SECRET_KEYS: `*old=${oldKey}` }
      await inStore(withOld, Effect.flatMap(ConnectionService.ConnectionService, (connections) =>
        connections.create(Seed.systemActor, { organization: "acme", environment: "prod" }, {
          name: "warehouse",
          type: "postgres",
          postgresConnection: { host: "db.internal", port: 5432, databaseName: "sales", userName: "reader", password: "s3cret-password" }
        })))

      const onlyNew = { ...env, MODELGATE_SECRET_KEYS: `*new=${newKey}` }
      const refused = await cli(["reencrypt"], onlyNew)
      assert.strictEqual(refused.code, 1)
      assert.match(refused.stderr, /MODELGATE_SECRET_KEYS lacks the key id\(s\) old/)

      const both = { ...env, MODELGATE_SECRET_KEYS: `old=${oldKey},*new=${newKey}` }
      const moved = await cli(["reencrypt"], both)
      assert.strictEqual(moved.code, 0, moved.stderr)
      assert.strictEqual(moved.stdout.trim(), "Re-encrypted the secrets of 1 connection(s)")
      const none = await cli(["reencrypt"], both)
      assert.strictEqual(none.stdout.trim(), "Re-encrypted the secrets of 0 connection(s)")

      // The old key can go: the secret opens with the new one alone.
      const read = await inStore(onlyNew, Effect.flatMap(ConnectionService.ConnectionService, (connections) =>
        connections.get(Seed.systemActor, { organization: "acme", environment: "prod", name: "warehouse" })))
      assert.strictEqual(read.name, "warehouse")
      assert.notInclude(moved.stdout + moved.stderr, "s3cret-password")
    }, 90_000)

    if (backend.embedded) {
      it("refuses a data directory another process holds", async () => {
        const lock = join(env["MODELGATE_DATA_DIR"] ?? "", ".modelgate.lock")
        writeFileSync(lock, String(process.pid))
        try {
          const ran = await cli(["migrate"], env)
          assert.strictEqual(ran.code, 1)
          assert.include(ran.stderr, `is in use by process ${process.pid}`)
        } finally {
          rmSync(lock, { force: true })
        }
        const free = await cli(["migrate"], env)
        assert.strictEqual(free.code, 0, free.stderr)
      }, 60_000)
    }
  })
}

describe("modelgate input errors", () => {
  const dataDir = () => ({ MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), "modelgate-cli-bad-")), "data") })

  it("--help lists every command; a command's help lists its flags", async () => {
    const root = await cli(["--help"], {})
    assert.strictEqual(root.code, 0)
    for (const name of ["migrate", "seed", "publish", "token", "api-key", "reencrypt"]) assert.match(root.stdout, new RegExp(`^  ${name} `, "m"))
    const publish = await cli(["publish", "--help"], {})
    assert.strictEqual(publish.code, 0)
    for (const flag of ["--org", "--env", "--package", "--version", "--latest"]) assert.include(publish.stdout, flag)
    const apiKey = await cli(["api-key", "--help"], {})
    for (const name of ["create", "list", "revoke"]) assert.match(apiKey.stdout, new RegExp(`^  ${name} `, "m"))
  }, 60_000)

  it("an unknown command or missing arguments fail with their message", async () => {
    const unknown = await cli(["bogus"], {})
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, `Unknown subcommand "bogus"`)
    const noFlags = await cli(["publish", flights], dataDir())
    assert.strictEqual(noFlags.code, 1)
    assert.match(noFlags.stderr, /Missing required flag: --(org|env|package|version)/)
    const noFile = await cli(["seed"], dataDir())
    assert.strictEqual(noFile.code, 1)
    assert.match(noFile.stderr, /Missing required argument|file/)
    const noUser = await cli(["api-key", "create"], dataDir())
    assert.strictEqual(noUser.code, 1)
    assert.include(noUser.stderr, "--user")
  }, 60_000)

  it("a missing or bad variable stops with a message naming it, and no secret is printed", async () => {
    const noKeys = await cli(["reencrypt"], { DATABASE_URL: "postgres://reader:hunter2-password@127.0.0.1:1/none" })
    assert.strictEqual(noKeys.code, 1)
    assert.include(noKeys.stderr, "MODELGATE_SECRET_KEYS is required with DATABASE_URL")
    assert.notInclude(noKeys.stdout + noKeys.stderr, "hunter2-password")

    const badKeys = await cli(["reencrypt"], { ...dataDir(), MODELGATE_SECRET_KEYS: "not-a-keyring" })
    assert.strictEqual(badKeys.code, 1)
    assert.match(badKeys.stderr, /MODELGATE_SECRET_KEYS: /)
    assert.notInclude(badKeys.stderr, "not-a-keyring")

    const work = mkdtempSync(join(tmpdir(), "modelgate-cli-bad-"))
    const badTimeout = await cli(["seed", seedFile(work)], { ...dataDir(), MODELGATE_CONNECT_TIMEOUT_MS: "soon" })
    assert.strictEqual(badTimeout.code, 1)
    assert.match(badTimeout.stderr, /Invalid configuration: .*MODELGATE_CONNECT_TIMEOUT_MS/)

    const refused = await cli(["migrate"], { DATABASE_URL: "postgres://reader:hunter2-password@127.0.0.1:1/none" })
    assert.strictEqual(refused.code, 1)
    assert.notInclude(refused.stdout + refused.stderr, "hunter2-password")
    assert.match(refused.stderr, /ERROR\n\s+\S/)

    const badSeed = join(work, "bad.json")
    writeFileSync(badSeed, JSON.stringify({ organizations: [{ name: "acme", unknownField: 1 }] }))
    const invalid = await cli(["seed", badSeed], dataDir())
    assert.strictEqual(invalid.code, 1)
    assert.match(invalid.stderr, /Invalid seed file .*bad\.json/)
  }, 90_000)
})
