/**
 * OAuth 2.0 on the MCP server: access tokens issued by the configured authorization server
 * (verified with its JWKS, served here by a real local HTTP server) authenticate when their
 * audience is the MCP resource; another audience, another issuer or an unknown key do not. The
 * protected-resource metadata names the authorization server.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { exportJWK, generateKeyPair, SignJWT } from "jose"
import { createServer } from "node:http"
import { start } from "./TestServer.ts"

const issuer = "https://idp.example.test"

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [{ id: "admin", email: "admin@demo.test" }],
  organizations: [{ name: "demo", grants: [{ userGroupId: "user:admin", permission: "admin" }], environments: [{ name: "demo" }] }]
}

/** A JWKS endpoint on a free port for the current scope. */
const jwksServer = (jwks: unknown) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly close: () => void }>((done) => {
        const server = createServer((_request, response) => {
          response.writeHead(200, { "content-type": "application/json" })
          response.end(JSON.stringify(jwks))
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          done({ url: `http://127.0.0.1:${port}/.well-known/jwks.json`, close: () => server.close() })
        })
      })
    ),
    (server) => Effect.sync(() => server.close())
  )

describe("MCP with an OAuth authorization server", () => {
  it.live("accepts the authorization server's access tokens for the MCP resource only", () =>
    Effect.gen(function*() {
      const { privateKey, publicKey } = yield* Effect.promise(() => generateKeyPair("RS256"))
      const { privateKey: strangerKey } = yield* Effect.promise(() => generateKeyPair("RS256"))
      const jwk = { ...(yield* Effect.promise(() => exportJWK(publicKey))), kid: "k1", alg: "RS256", use: "sig" }
      const jwks = yield* jwksServer({ keys: [jwk] })
      const server = yield* start(seed, { backend: "pglite", oauth: { jwksUrl: jwks.url, issuer } })
      const resource = `${server.url}/mcp`
      const token = (claims: { readonly audience?: string; readonly issuer?: string; readonly key?: typeof privateKey }) =>
        Effect.promise(() =>
          new SignJWT({})
            .setProtectedHeader({ alg: "RS256", kid: "k1" })
            .setSubject("admin")
            .setIssuer(claims.issuer ?? issuer)
            .setAudience(claims.audience ?? resource)
            .setIssuedAt()
            .setExpirationTime("5m")
            .sign(claims.key ?? privateKey)
        )
      const list = (bearer: string) =>
        Effect.promise(() =>
          fetch(resource, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${bearer}` },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          })
        )
      const accepted = yield* list(yield* token({}))
      assert.strictEqual(accepted.status, 200)
      const body = (yield* Effect.promise(() => accepted.json())) as { result?: { tools?: ReadonlyArray<{ name: string }> } }
      assert.deepStrictEqual(body.result?.tools?.map((t) => t.name).sort(), ["execute_query", "get_context"])

      // Another audience (e.g. the admin API), another issuer, a key the JWKS does not hold.
      for (const bad of [{ audience: "modelgate" }, { issuer: "https://evil.example.test" }, { key: strangerKey }]) {
        const refused = yield* list(yield* token(bad))
        assert.strictEqual(refused.status, 401, JSON.stringify(bad))
        assert.match(refused.headers.get("www-authenticate") ?? "", /resource_metadata=/)
      }
      // Development tokens signed with the server's own secret still work.
      assert.strictEqual((yield* list(yield* Effect.promise(() => server.mcpToken("admin")))).status, 200)

      const metadata = yield* Effect.promise(() => fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`).then((r) => r.json()))
      assert.deepStrictEqual((metadata as { authorization_servers?: ReadonlyArray<string> }).authorization_servers, [issuer])
    }).pipe(Effect.scoped), 120_000)
})
