/**
 * Embedding modelgate as a published library would be embedded: every package the host application
 * needs is built and packed (`npm pack`), `examples/host-app` is copied out of the repository with
 * its dependencies pointing at the tarballs, installed offline, typechecked and started on Node 24.
 * Then its own routes, the admin API under `/platform` with the host's own session (no JWT), and
 * the MCP server at `/platform/mcp` (tools/list, execute_query) are called through it.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createServer } from "node:net"
import { promisify } from "node:util"
import { PackageFiles } from "@modelgate/http"

const repo = resolve(import.meta.dirname, "../../..")
const bin = join(repo, "node_modules/.bin")
const node24 = join(bin, "node")
const env = { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}` }

/** Runs a command; a failure carries its output. */
const run = async (command: string, args: ReadonlyArray<string>, cwd: string): Promise<string> => {
  try {
    const { stdout } = await promisify(execFile)(command, [...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`)
  }
}

interface Manifest {
  readonly name: string
  readonly sideEffects?: unknown
  readonly files?: ReadonlyArray<string>
  readonly exports?: Record<string, Record<string, string>>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

/** A free loopback port. */
const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => done(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest

// The repository's packages by name, and those the host application needs (with their own modelgate dependencies).
const packages = new Map(readdirSync(join(repo, "packages")).map((dir) => {
  const manifest = readManifest(join(repo, "packages", dir))
  return [manifest.name, { dir: join(repo, "packages", dir), manifest }] as const
}))
const modelgateDeps = (m: Manifest) => Object.keys(m.dependencies ?? {}).filter((d) => d.startsWith("@modelgate/"))
const needed = (): ReadonlyArray<string> => {
  // Dependencies first, so that each package is built after the ones it imports.
  const order: Array<string> = []
  const visit = (name: string) => {
    if (order.includes(name)) return
    const pkg = packages.get(name)
    if (pkg === undefined) throw new Error(`${name} is not a package of the repository`)
    for (const dep of modelgateDeps(pkg.manifest)) visit(dep)
    order.push(name)
  }
  for (const dep of modelgateDeps(readManifest(join(repo, "examples/host-app")))) visit(dep)
  return order
}

let work = ""
let host: ChildProcess | undefined
let url = ""
let output = ""
const durations: Record<string, number> = {}

const timed = async <A>(step: string, f: () => Promise<A>): Promise<A> => {
  const started = Date.now()
  try {
    return await f()
  } finally {
    durations[step] = Date.now() - started
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "modelgate-host-"))
  const names = needed()
  const tarballs = new Map<string, string>()
  await timed("build", async () => {
    for (const name of names) await run("npm", ["run", "build", "-w", name], repo)
  })
  await timed("pack", async () => {
    for (const name of names) {
      const dir = packages.get(name)?.dir ?? ""
      const [packed] = JSON.parse(await run("npm", ["pack", dir, "--json", "--pack-destination", work], repo)) as ReadonlyArray<{ filename: string; files: ReadonlyArray<{ path: string }> }>
      if (packed === undefined) throw new Error(`npm pack ${name} gave nothing`)
      const files = packed.files.map((f) => f.path)
      if (!files.includes("dist/index.js") || !files.includes("dist/index.d.ts")) throw new Error(`${name}'s tarball lacks dist: ${files.join(", ")}`)
      tarballs.set(name, join(work, packed.filename))
    }
  })
  // The host application, out of the repository, on the tarballs: every modelgate package is a
  // direct dependency so that the packages' own `@modelgate/*: 0.0.0` are met by the tarballs.
  const app = join(work, "host-app")
  cpSync(join(repo, "examples/host-app"), app, { recursive: true, filter: (source) => !source.includes("node_modules") })
  const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as { dependencies: Record<string, string> }
  for (const [name, tarball] of tarballs) manifest.dependencies[name] = `file:${tarball}`
  writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2))
  await timed("install", () => run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], app))
  await timed("typecheck", () => run(join(bin, "tsc"), ["--noEmit", "-p", app], app))

  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  await timed("start", () =>
    new Promise<void>((ready, fail) => {
      const child = spawn(node24, ["src/main.ts"], { cwd: app, env: { ...env, PORT: String(port), HOST: "127.0.0.1" }, stdio: ["ignore", "pipe", "pipe"] })
      host = child
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes(`listening on ${url}`)) ready()
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      child.on("exit", (code) => fail(new Error(`the host application exited (${code}):\n${output}`)))
    }))
}, 300_000)

afterAll(async () => {
  const child = host
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((done) => child.once("exit", done))
    child.kill("SIGTERM")
    await exited
  }
  console.log(`host-app e2e steps (ms): ${JSON.stringify(durations)}`)
  if (work !== "") rmSync(work, { recursive: true, force: true })
}, 60_000)

const call = async (path: string, init: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: unknown; readonly raw?: Uint8Array } = {}) => {
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body))
  const headers = { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers }
  const response = await fetch(`${url}${path}`, { method: init.method ?? "GET", headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, json, text, headers: response.headers }
}

const login = async (user: string) => {
  const response = await call(`/login?user=${user}`, { method: "POST" })
  assert.strictEqual(response.status, 200, response.text)
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  assert.match(cookie, /^host_session=/)
  return { cookie, session: (response.json as { session: string }).session }
}

const main = "/platform/api/v0/organizations/acme/environments/main"

describe("a host application embedding the packed packages", () => {
  it("the packed manifests point at dist, ship it, have no side effects and take effect as a peer", () => {
    for (const name of needed()) {
      const m = packages.get(name)?.manifest
      assert.isDefined(m)
      if (m === undefined) continue
      assert.deepInclude(m.exports?.["."] ?? {}, { types: "./dist/index.d.ts", import: "./dist/index.js" }, name)
      assert.include(m.files ?? [], "dist", name)
      assert.strictEqual(m.sideEffects, false, name)
      assert.isString(m.peerDependencies?.["effect"], name)
      assert.isUndefined(m.dependencies?.["effect"], name)
    }
  })

  it("serves its own routes and signs its own users in", async () => {
    assert.deepStrictEqual((await call("/")).json, { app: "host-app", signedInAs: null })
    const { cookie } = await login("alice")
    assert.deepStrictEqual((await call("/", { headers: { cookie } })).json, { app: "host-app", signedInAs: "alice" })
    assert.strictEqual((await call("/login?user=mallory", { method: "POST" })).status, 401)
    assert.strictEqual((await call("/elsewhere")).status, 404)
  })

  it("mounts the admin API under /platform, with the caller named by the host's session and no JWT", async () => {
    const alice = await login("alice")
    // No session: 401 in the spec's shape; a bearer token is not a session.
    const anonymous = await call(`${main}/connections`)
    assert.strictEqual(anonymous.status, 401)
    assert.deepInclude(anonymous.json as object, { code: "AUTHENTICATION_REQUIRED" })
    assert.strictEqual((await call(`${main}/connections`, { headers: { authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x" } })).status, 401)
    // The unprefixed path is the host's, not modelgate's.
    assert.deepStrictEqual((await call("/api/v0/organizations/acme/environments/main/connections", { headers: { cookie: alice.cookie } })).json, { error: "not found" })

    const created = await call(`${main}/connections`, { method: "POST", headers: { cookie: alice.cookie }, body: { name: "duckdb", type: "duckdb" } })
    assert.strictEqual(created.status, 201, created.text)
    const listed = await call(`${main}/connections`, { headers: { "x-host-session": alice.session } })
    assert.deepStrictEqual((listed.json as ReadonlyArray<{ name: string }>).map((c) => c.name), ["duckdb"])

    assert.strictEqual((await call(`${main}/packages`, { method: "POST", headers: { cookie: alice.cookie }, body: { name: "flights" } })).status, 201)
    const archive = PackageFiles.toTarGz(await Effect.runPromise(PackageFiles.fromDirectory(resolve(import.meta.dirname, "../demo/packages/flights"))))
    const published = await call(`${main}/packages/flights/versions?id=1.0.0`, {
      method: "POST",
      headers: { cookie: alice.cookie, "content-type": "application/gzip" },
      raw: archive
    })
    assert.strictEqual(published.status, 201, published.text)

    // Another user of the host, with no grant in modelgate: the package is not there for them.
    const bob = await login("bob")
    const hidden = await call(`${main}/packages/flights`, { headers: { cookie: bob.cookie } })
    assert.strictEqual(hidden.status, 404)
    assert.deepInclude(hidden.json as object, { code: "RESOURCE_NOT_FOUND" })
    const unknown = await call("/platform/api/v0/nothing", { headers: { cookie: alice.cookie } })
    assert.deepInclude(unknown.json as object, { code: "RESOURCE_NOT_FOUND" })
  })

  it("serves the MCP server at /platform/mcp: tools/list and execute_query with a key made through the admin API", async () => {
    const alice = await login("alice")
    const key = await call("/platform/api/v0/users/me/api-keys", { method: "POST", headers: { cookie: alice.cookie }, body: { name: "assistant" } })
    assert.strictEqual(key.status, 201, key.text)
    const connect = async (authorization: string) => {
      const client = new Client({ name: "host-app-e2e", version: "0.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/platform/mcp`), { requestInit: { headers: { authorization } } }))
      return client
    }
    const client = await connect(`ApiKey ${(key.json as { key: string }).key}`)
    try {
      const { tools } = await client.listTools()
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), ["execute_query", "get_context"])
      const result = (await client.callTool({
        name: "execute_query",
        arguments: { project_name: "main", package_name: "flights", model_uri: "flights.malloy", version_id: "1.0.0", query: "run: flights -> { aggregate: flight_count }" }
      })) as { isError?: boolean; content: ReadonlyArray<{ text?: string }>; structuredContent?: Record<string, unknown> }
      const text = result.content.map((c) => c.text ?? "").join("\n")
      assert.notStrictEqual(result.isError, true, text)
      const count = /"flight_count":\s*(\d+)/.exec(text)?.[1]
      assert.isDefined(count, text)
      assert.isAbove(Number(count), 0)
    } finally {
      await client.close()
    }
    // The host's session token is accepted as a bearer token (the host's TokenVerifier); nothing else is.
    const bySession = await connect(`Bearer ${alice.session}`)
    try {
      assert.strictEqual((await bySession.listTools()).tools.length, 2)
    } finally {
      await bySession.close()
    }
    const refused = await fetch(`${url}/platform/mcp`, {
      method: "POST",
      headers: { authorization: "ApiKey mg_not_a_key", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    assert.strictEqual(refused.status, 401)
    assert.include(refused.headers.get("www-authenticate") ?? "", `${url}/platform/.well-known/oauth-protected-resource`)
  })
})
