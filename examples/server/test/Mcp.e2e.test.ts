/**
 * The MCP server end to end: the official SDK client against the running example server
 * (PGlite), for every protocol revision: tools, both execute_query patterns on both demo
 * packages, parameter and query errors, authentication and permission and workspace scoping.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { resolve } from "node:path"
import { type Running, start } from "./TestServer.ts"

const demoPackages = resolve(import.meta.dirname, "../demo/packages")

const keys = {
  admin: "mg_e2e_admin_key_0000000000000000000000000",
  analyst: "mg_e2e_analyst_key_00000000000000000000000",
  flightsOnly: "mg_e2e_flights_key_00000000000000000000000",
  revoked: "mg_e2e_revoked_key_00000000000000000000000"
}

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [
    { id: "admin", email: "admin@demo.test" },
    { id: "analyst", email: "analyst@demo.test" },
    { id: "pilot", email: "pilot@demo.test" }
  ],
  groups: [{ name: "analysts", members: ["analyst"] }],
  apiKeys: [
    { key: keys.admin, user: "admin" },
    { key: keys.analyst, user: "analyst" },
    { key: keys.flightsOnly, user: "pilot" },
    { key: keys.revoked, user: "admin", revoked: true }
  ],
  organizations: [{
    name: "demo",
    grants: [{ userGroupId: "user:admin", permission: "admin" }],
    environments: [{
      name: "demo",
      grants: [{ userGroupId: "group:analysts", permission: "viewer" }],
      connections: [{ name: "duckdb", type: "duckdb" }],
      packages: [
        { name: "ecommerce", versions: [{ id: "1.0.0", path: `${demoPackages}/ecommerce`, latest: true }] },
        {
          name: "flights",
          grants: [{ userGroupId: "user:pilot", permission: "viewer" }],
          versions: [{ id: "0.9.0", path: `${demoPackages}/flights` }, { id: "1.0.0", path: `${demoPackages}/flights`, latest: true }]
        }
      ]
    }],
    workspaces: [{ name: "retail", packages: ["demo/ecommerce"], grants: [{ userGroupId: "group:analysts", permission: "viewer" }] }]
  }]
}

let server: Running
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  server = await Effect.runPromise(start(seed, { backend: "pglite" }).pipe(Scope.provide(scope)))
}, 120_000)
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const connect = async (authorization: string | undefined, path = "/mcp", protocolVersion?: string) => {
  const client = new Client({ name: "e2e", version: "0.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}${path}`), {
    requestInit: { headers: authorization === undefined ? {} : { Authorization: authorization } }
  })
  if (protocolVersion !== undefined) {
    // The SDK client always asks for its latest revision: ask for an older one at initialize, as an
    // older client would, so that the server negotiates it (and binds the session to it).
    const send = transport.send.bind(transport)
    transport.send = (message, options) =>
      send("method" in message && message.method === "initialize" ? { ...message, params: { ...message.params, protocolVersion } } : message, options)
  }
  await client.connect(transport)
  if (protocolVersion !== undefined) assert.strictEqual(transport.protocolVersion, protocolVersion)
  return client
}

interface Result {
  readonly isError?: boolean | undefined
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown> | undefined
}

const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<Result> =>
  (await client.callTool({ name, arguments: args })) as Result

const textOf = (result: Result) => result.content.map((c) => c.text ?? "").join("\n")

const query = (pkg: "ecommerce" | "flights", rest: Record<string, unknown>) => ({
  project_name: "demo",
  package_name: pkg,
  model_uri: `${pkg}.malloy`,
  ...rest
})

describe("MCP server end to end (pglite)", () => {
  for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
    it(`lists the tools and runs both patterns on both packages (protocol ${version})`, async () => {
      const client = await connect(`ApiKey ${keys.admin}`, "/mcp", version)
      try {
        const { tools } = await client.listTools()
        const byName = new Map(tools.map((t) => [t.name, t]))
        assert.deepStrictEqual([...byName.keys()].sort(), ["execute_query", "get_context"])
        assert.strictEqual(byName.get("execute_query")?.annotations?.readOnlyHint, true)
        assert.isDefined(byName.get("execute_query")?.outputSchema)
        assert.deepStrictEqual(byName.get("get_context")?.inputSchema.required, ["natural_language_query"])

        const custom = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }" }))
        assert.notStrictEqual(custom.isError, true, textOf(custom))
        const body = custom.structuredContent ?? {}
        assert.deepStrictEqual(JSON.parse(textOf(custom)), body)
        const rows = body["data"] as ReadonlyArray<Record<string, unknown>>
        assert.strictEqual(rows.length, 1)
        assert.isAbove(Number(rows[0]?.["order_count"]), 0)
        const metadata = body["metadata"] as Record<string, unknown>
        assert.strictEqual(metadata["version"], "1.0.0")
        assert.strictEqual(metadata["truncated"], false)
        assert.match(String(metadata["sql"]), /SELECT/i)
        assert.notInclude(String(metadata["sql"]), "modelgate-packages")

        const named = await callTool(client, "execute_query", query("ecommerce", { source_name: "order_items", query_name: "by_category" }))
        assert.notStrictEqual(named.isError, true, textOf(named))
        assert.isAbove((named.structuredContent?.["data"] as ReadonlyArray<unknown>).length, 1)

        const flights = await callTool(client, "execute_query", query("flights", { query: "run: flights -> { group_by: carriers.carrier_name; aggregate: flight_count; limit: 3 }", version_id: "1.0.0" }))
        assert.notStrictEqual(flights.isError, true, textOf(flights))
        const flightRows = flights.structuredContent?.["data"] as ReadonlyArray<Record<string, unknown>>
        assert.strictEqual(flightRows.length, 3)
        assert.isString(flightRows[0]?.["carrier_name"])

        const view = await callTool(client, "execute_query", query("flights", { source_name: "flights", query_name: "by_carrier" }))
        assert.notStrictEqual(view.isError, true, textOf(view))
        assert.isAbove(Number(view.structuredContent?.["totalRows"]), 1)
      } finally {
        await client.close()
      }
    })
  }

  it("sandbox: custom queries that read files, import, run raw SQL or reach the network are refused and change nothing", async () => {
    const client = await connect(`ApiKey ${keys.admin}`)
    try {
      const attempts = [
        "run: duckdb.sql(\"select * from read_csv('/etc/passwd')\") -> { select: * }",
        "import 'ecommerce.malloy'\nrun: orders -> { aggregate: order_count }",
        "run: duckdb.table('/etc/passwd') -> { select: * }",
        "run: duckdb.table('https://example.com/x.parquet') -> { select: * }",
        "run: orders -> { aggregate: n is sql_number(\"(select count(*) from read_text('/etc/hostname'))\") }"
      ]
      for (const attempt of attempts) {
        const result = await callTool(client, "execute_query", query("ecommerce", { query: attempt }))
        assert.strictEqual(result.isError, true, attempt)
        assert.notInclude(textOf(result), "root:")
      }
      // The model still answers afterwards.
      const after = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }" }))
      assert.notStrictEqual(after.isError, true, textOf(after))
    } finally {
      await client.close()
    }
  })

  it("version pinning: a pinned version is served until it is archived; the latest is the default", async () => {
    const client = await connect(`ApiKey ${keys.admin}`)
    try {
      const run = { query: "run: flights -> { aggregate: flight_count }" }
      const pinned = await callTool(client, "execute_query", query("flights", { ...run, version_id: "0.9.0" }))
      assert.notStrictEqual(pinned.isError, true, textOf(pinned))
      assert.strictEqual((pinned.structuredContent?.["metadata"] as Record<string, unknown>)["version"], "0.9.0")
      const token = await server.token("admin")
      const archived = await fetch(`${server.url}/api/v0/organizations/demo/environments/demo/packages/flights/versions/0.9.0`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ archiveStatus: "archive" })
      })
      assert.strictEqual(archived.status, 200)
      const refused = await callTool(client, "execute_query", query("flights", { ...run, version_id: "0.9.0" }))
      assert.strictEqual(refused.isError, true)
      const latest = await callTool(client, "execute_query", query("flights", run))
      assert.strictEqual((latest.structuredContent?.["metadata"] as Record<string, unknown>)["version"], "1.0.0")
    } finally {
      await client.close()
    }
  })

  it("API keys through the admin API: created (shown once), usable on MCP, listed without the key, revoked → 401", async () => {
    const token = await server.token("analyst", { email: "analyst@demo.test" })
    const admin = `${server.url}/api/v0/users/me/api-keys`
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const created = await fetch(admin, { method: "POST", headers, body: JSON.stringify({ name: "laptop" }) })
    assert.strictEqual(created.status, 201)
    const body = await created.json() as { id: string; key: string; name: string }
    assert.match(body.key, /^mg_/)
    const client = await connect(`ApiKey ${body.key}`)
    try {
      const ok = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }" }))
      assert.notStrictEqual(ok.isError, true, textOf(ok))
    } finally {
      await client.close()
    }
    const listed = await (await fetch(admin, { headers })).text()
    assert.include(listed, body.id)
    const mine = (JSON.parse(listed) as ReadonlyArray<{ id: string; lastUsedAt: string | null }>).find((k) => k.id === body.id)
    assert.isNotNull(mine?.lastUsedAt ?? null)
    assert.notInclude(listed, body.key)
    assert.notInclude(listed, "sha256:")
    const revoked = await fetch(`${admin}/${body.id}`, { method: "DELETE", headers })
    assert.strictEqual(revoked.status, 200)
    const refused = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `ApiKey ${body.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    assert.strictEqual(refused.status, 401)
    // Someone else's key id is not found.
    const otherToken = await server.token("pilot")
    const stranger = await fetch(`${admin}/${body.id}`, { method: "DELETE", headers: { authorization: `Bearer ${otherToken}` } })
    assert.strictEqual(stranger.status, 404)
  })

  it("bad parameters, bad queries, unknown versions and unknown tools", async () => {
    const client = await connect(`ApiKey ${keys.admin}`)
    try {
      // Protocol misuse is a JSON-RPC error -32602 (invalid params), not a tool result.
      const rejected = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args }).then(
          (result) => assert.fail(`expected -32602, got a result: ${JSON.stringify(result).slice(0, 200)}`),
          (e: unknown) => e as { code?: number; message?: string }
        )
      const both = await rejected("execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }", source_name: "orders" }))
      assert.strictEqual(both.code, -32602)
      assert.match(String(both.message), /exactly one pattern/)
      const neither = await rejected("execute_query", query("ecommerce", {}))
      assert.strictEqual(neither.code, -32602)
      const noSource = await rejected("execute_query", query("ecommerce", { query_name: "by_category" }))
      assert.match(String(noSource.message), /requires source_name/)
      const missing = await rejected("execute_query", { project_name: "demo", query: "run: x -> {}" })
      assert.strictEqual(missing.code, -32602)
      assert.match(String(missing.message), /package_name/)
      const extra = await rejected("execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }", sql: "select 1" }))
      assert.strictEqual(extra.code, -32602)
      const empty = await rejected("execute_query", query("ecommerce", { query: "  " }))
      assert.strictEqual(empty.code, -32602)

      const unknownField = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: no_such_measure }" }))
      assert.strictEqual(unknownField.isError, true)
      assert.match(textOf(unknownField), /no_such_measure/)
      const unknownView = await callTool(client, "execute_query", query("ecommerce", { source_name: "orders", query_name: "nope" }))
      assert.strictEqual(unknownView.isError, true)
      const unknownVersion = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }", version_id: "9.9.9" }))
      assert.match(textOf(unknownVersion), /9\.9\.9 .*not found/)

      const chain = await rejected("get_context", { natural_language_query: "orders by channel", package_name: "ecommerce" })
      assert.strictEqual(chain.code, -32602)
      assert.match(String(chain.message), /package_name requires project_name/)
      const noQuestion = await rejected("get_context", { project_name: "demo" })
      assert.strictEqual(noQuestion.code, -32602)

      const unknownTool = await client.callTool({ name: "drop_tables", arguments: {} }).then(() => undefined, (e: unknown) => e)
      assert.match(String(unknownTool), /-32602|Unknown tool/)
    } finally {
      await client.close()
    }
  })

  it("get_context returns matching entities in the spec's shape", async () => {
    const client = await connect(`ApiKey ${keys.admin}`)
    try {
      const result = await callTool(client, "get_context", { natural_language_query: "How many orders per sales channel?", project_name: "demo" })
      assert.notStrictEqual(result.isError, true, textOf(result))
      const sources = result.structuredContent?.["sources"] as ReadonlyArray<Record<string, unknown>>
      assert.isAbove(sources.length, 0)
      assert.strictEqual(sources[0]?.["package_name"], "ecommerce")
      const phrases = sources[0]?.["phrases"] as ReadonlyArray<Record<string, unknown>>
      const entities = phrases[0]?.["entities"] as ReadonlyArray<Record<string, unknown>>
      assert.isTrue(entities.some((e) => /(^|\.)(channel|order_count)$/.test(String(e["name"]))), JSON.stringify(entities.map((e) => e["name"])))
      assert.isArray(result.structuredContent?.["next_steps"])
      assert.isString(result.structuredContent?.["modeling_documentation"])

      // `limit` caps the entities of each phrase in each source; out of range is invalid params.
      const capped = await callTool(client, "get_context", { natural_language_query: "How many orders per sales channel?", project_name: "demo", limit: 1 })
      const cappedSources = capped.structuredContent?.["sources"] as ReadonlyArray<{ phrases: ReadonlyArray<{ entities: ReadonlyArray<unknown> }> }>
      assert.isAbove(cappedSources.length, 0)
      for (const source of cappedSources) for (const phrase of source.phrases) assert.isAtMost(phrase.entities.length, 1)
      const outOfRange = await client.callTool({ name: "get_context", arguments: { natural_language_query: "orders", limit: 0 } }).then(() => undefined, (e: unknown) => e as { code?: number })
      assert.strictEqual(outOfRange?.code, -32602)
    } finally {
      await client.close()
    }
  })

  it("no credentials, a wrong key and a revoked key get 401 with WWW-Authenticate", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
    for (const authorization of [undefined, `ApiKey mg_wrong`, `ApiKey ${keys.revoked}`, "Bearer not-a-jwt"]) {
      const response = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify(init)
      })
      assert.strictEqual(response.status, 401, String(authorization))
      assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer resource_metadata=".*\/\.well-known\/oauth-protected-resource"$/)
      const body = (await response.json()) as { error?: { code?: number } }
      assert.isNumber(body.error?.code)
      await connect(authorization).then(() => assert.fail("connected"), () => undefined)
    }
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>
    assert.strictEqual(metadata["resource"], `${server.url}/mcp`)
    assert.deepStrictEqual(metadata["bearer_methods_supported"], ["header"])
    assert.strictEqual((await fetch(`${server.url}/mcp`, { headers: { authorization: `ApiKey ${keys.admin}` } })).status, 405)
  })

  it("negotiates each protocol revision at initialize and refuses foreign origins", async () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `ApiKey ${keys.admin}`, ...headers },
        body: JSON.stringify(body)
      })
    for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
      const response = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "0" } } })
      assert.strictEqual(response.status, 200)
      const body = (await response.json()) as { result?: { protocolVersion?: string; instructions?: string } }
      assert.strictEqual(body.result?.protocolVersion, version)
      assert.isString(body.result?.instructions)
    }
    const evil = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "https://evil.example" })
    assert.strictEqual(evil.status, 403)
    const badVersion = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "1999-01-01" })
    assert.strictEqual(badVersion.status, 400)
  })

  it("issues Mcp-Session-Id at initialize and checks it on later requests (principal, URL, revision)", async () => {
    const post = (body: unknown, key: string, headers: Record<string, string> = {}, path = "/mcp") =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `ApiKey ${key}`, ...headers },
        body: JSON.stringify(body)
      })
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
    const started = await post(initialize, keys.admin)
    assert.strictEqual(started.status, 200)
    const session = started.headers.get("mcp-session-id")
    assert.isString(session)
    assert.match(session ?? "", /^[\x21-\x7e]+$/)
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" }
    const withSession = (key: string, id: string, path = "/mcp", version = "2025-06-18") =>
      post(list, key, { "mcp-session-id": id, "mcp-protocol-version": version }, path)
    assert.strictEqual((await withSession(keys.admin, session ?? "")).status, 200)
    // Another principal, another URL, a tampered id, another revision.
    assert.strictEqual((await withSession(keys.analyst, session ?? "")).status, 404)
    assert.strictEqual((await withSession(keys.admin, session ?? "", "/mcp/workspace/retail")).status, 404)
    const tampered = `${(session ?? "").slice(0, -2)}${(session ?? "").endsWith("AA") ? "BB" : "AA"}`
    const forged = await withSession(keys.admin, tampered)
    assert.strictEqual(forged.status, 404)
    assert.match(((await forged.json()) as { error: { message: string } }).error.message, /initialize again/)
    assert.strictEqual((await withSession(keys.admin, session ?? "", "/mcp", "2025-03-26")).status, 400)
    // Without the header a request is still served: sessions are offered, not required.
    assert.strictEqual((await post(list, keys.admin)).status, 200)
    // A session cannot be ended early: DELETE is not allowed.
    const ended = await fetch(`${server.url}/mcp`, { method: "DELETE", headers: { authorization: `ApiKey ${keys.admin}`, "mcp-session-id": session ?? "" } })
    assert.strictEqual(ended.status, 405)
  })

  it("a bearer JWT for the MCP resource authenticates too; an admin API token (another audience) does not", async () => {
    const adminToken = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${await server.token("admin")}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    assert.strictEqual(adminToken.status, 401)
    const client = await connect(`Bearer ${await server.mcpToken("admin")}`)
    try {
      const result = await callTool(client, "execute_query", query("flights", { source_name: "flights", query_name: "by_carrier" }))
      assert.notStrictEqual(result.isError, true, textOf(result))
    } finally {
      await client.close()
    }
  })

  it("a caller sees only the packages it may view", async () => {
    const client = await connect(`ApiKey ${keys.flightsOnly}`)
    try {
      const denied = await callTool(client, "execute_query", query("ecommerce", { query: "run: orders -> { aggregate: order_count }" }))
      assert.strictEqual(denied.isError, true)
      assert.match(textOf(denied), /not found/)
      const allowed = await callTool(client, "execute_query", query("flights", { source_name: "flights", query_name: "by_carrier" }))
      assert.notStrictEqual(allowed.isError, true, textOf(allowed))
      const context = await callTool(client, "get_context", { natural_language_query: "orders and flights by carrier" })
      const packages = (context.structuredContent?.["sources"] as ReadonlyArray<Record<string, unknown>>).map((s) => s["package_name"])
      assert.isFalse(packages.includes("ecommerce"))
    } finally {
      await client.close()
    }
  })

  it("a workspace URL narrows to the workspace's packages and needs access to the workspace", async () => {
    const client = await connect(`ApiKey ${keys.analyst}`, "/mcp/workspace/retail")
    try {
      const inside = await callTool(client, "execute_query", query("ecommerce", { source_name: "order_items", query_name: "by_category" }))
      assert.notStrictEqual(inside.isError, true, textOf(inside))
      const outside = await callTool(client, "execute_query", query("flights", { source_name: "flights", query_name: "by_carrier" }))
      assert.strictEqual(outside.isError, true)
      assert.match(textOf(outside), /not available in workspace retail/)
    } finally {
      await client.close()
    }
    // Unscoped, the analyst (environment viewer) may query flights.
    const unscoped = await connect(`ApiKey ${keys.analyst}`)
    try {
      const flights = await callTool(unscoped, "execute_query", query("flights", { source_name: "flights", query_name: "by_carrier" }))
      assert.notStrictEqual(flights.isError, true, textOf(flights))
    } finally {
      await unscoped.close()
    }
    await connect(`ApiKey ${keys.flightsOnly}`, "/mcp/workspace/retail").then(() => assert.fail("connected"), () => undefined)
    await connect(`ApiKey ${keys.admin}`, "/mcp/workspace/nope").then(() => assert.fail("connected"), () => undefined)
  })
})


describe("MCP rate limits (a server allowing 3 requests a minute per caller)", () => {
  let limited: Running
  const limitedScope = Effect.runSync(Scope.make())
  beforeAll(async () => {
    limited = await Effect.runPromise(start(seed, { backend: "pglite", rateLimit: 3 }).pipe(Scope.provide(limitedScope)))
  }, 120_000)
  afterAll(() => Effect.runPromise(Scope.close(limitedScope, Exit.void)))

  const post = (authorization: string | undefined) =>
    fetch(`${limited.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization === undefined ? {} : { authorization }) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
    })

  it("past the limit a caller gets 429 with Retry-After and a JSON-RPC error; other callers are not affected", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 3; i++) statuses.push((await post(`ApiKey ${keys.admin}`)).status)
    const over = await post(`ApiKey ${keys.admin}`)
    assert.deepStrictEqual([...statuses, over.status], [200, 200, 200, 429])
    assert.isAtLeast(Number(over.headers.get("retry-after")), 1)
    const body = (await over.json()) as { error?: { code?: number; message?: string } }
    assert.strictEqual(body.error?.code, -32000)
    assert.match(body.error?.message ?? "", /Rate limit exceeded/)
    // Another caller has its own budget.
    assert.strictEqual((await post(`ApiKey ${keys.analyst}`)).status, 200)
  })

  it("failed authentications are counted per address: past the limit they get 429 instead of 401", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await post(`ApiKey mg_guess_${i}`)).status)
    assert.deepStrictEqual(statuses, [401, 401, 401, 429])
    // A valid key is still served: its caller's budget is its own.
    assert.strictEqual((await post(`ApiKey ${keys.flightsOnly}`)).status, 200)
  })
})
