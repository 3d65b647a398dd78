/**
 * The MCP server as routes a host application mounts beside the admin API: `POST /mcp` and
 * `POST /mcp/workspace/{workspace}` speak Streamable HTTP (JSON responses, signed sessions that any
 * instance verifies, see McpSession) through the
 * official SDK's web-standard transport, and `/.well-known/oauth-protected-resource` serves the
 * RFC 9728 metadata. Callers authenticate with `ApiKey <key>` or a bearer JWT; the tools are
 * in McpTools. When the host provides core's `RateLimiter` (the example server does), each caller's
 * requests are counted under `user:<id> mcp`, and failed authentications under `ip:<address> mcp`.
 */
import { Clock, Context, DateTime, Effect, Layer, Option, Result } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Access, ApiKeys, OrganizationRepo, RateLimiter, Roles, UserRepo } from "@modelgate/core"
import { TokenVerifier } from "@modelgate/http"
import * as McpSession from "./McpSession.ts"
import * as McpTools from "./McpTools.ts"

/** How the MCP server is set up. */
export interface Options {
  /** The organization the MCP URLs serve (the host's organization). */
  readonly organization: string
  /**
   * The public base URL (e.g. `https://mcp.example.com`, or `https://example.com/platform` when a host
   * mounts the routes under `/platform`); absent: derived from the request's Host.
   */
  readonly publicUrl?: string | undefined
  /** OAuth authorization servers announced in the protected-resource metadata. */
  readonly authorizationServers?: ReadonlyArray<string> | undefined
  /** Browser origins allowed besides the server's own. */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /** Rows returned by execute_query; defaults to 1,000 (the runtime caps it). */
  readonly rowLimit?: number | undefined
  /**
   * Secret from which the `Mcp-Session-Id` signing key is derived; give every instance behind a
   * load balancer the same one. Absent: a random key per process (sessions end with it).
   */
  readonly sessionSecret?: string | Uint8Array | undefined
  /** How long a session id stays valid; defaults to 24 hours. */
  readonly sessionTtlMillis?: number | undefined
}

/** What the routes need from the host. */
export type Requirements = McpTools.Services | UserRepo.UserRepo | TokenVerifier.TokenVerifier | HttpRouter.HttpRouter

const metadataPath = "/.well-known/oauth-protected-resource"

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers })

const baseUrl = (options: Options, request: HttpServerRequest.HttpServerRequest) =>
  (options.publicUrl ?? `http://${request.headers["host"] ?? "localhost"}`).replace(/\/+$/, "")

/** Whether a JSON-RPC body is an `initialize` request. */
const isInitialize = (body: unknown): boolean =>
  typeof body === "object" && body !== null && !Array.isArray(body) && "method" in body && body.method === "initialize"

/** The protocol revision an `initialize` response negotiated, if it succeeded. */
const protocolVersionOf = (text: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== "object" || parsed === null || !("result" in parsed)) return undefined
    const result = parsed.result
    return typeof result === "object" && result !== null && "protocolVersion" in result && typeof result.protocolVersion === "string"
      ? result.protocolVersion
      : undefined
  } catch {
    return undefined
  }
}

/** The routes: MCP endpoints and the protected-resource metadata. */
export const layerRoutes = (options: Options): Layer.Layer<never, never, Requirements> =>
  Layer.unwrap(Effect.gen(function*() {
    const services = yield* Effect.context<McpTools.Services | UserRepo.UserRepo | TokenVerifier.TokenVerifier>()
    const users = yield* UserRepo.UserRepo
    const verifier = yield* TokenVerifier.TokenVerifier
    const access = yield* Access.Access
    const limiter = yield* Effect.serviceOption(RateLimiter.RateLimiter)
    const organizations = yield* OrganizationRepo.OrganizationRepo
    const rowLimit = options.rowLimit ?? 1_000
    const sessionKey = options.sessionSecret === undefined ? McpSession.randomKey() : McpSession.keyFrom(options.sessionSecret)
    const sessionTtl = options.sessionTtlMillis ?? 24 * 60 * 60 * 1000

    // Past the caller's budget: 429 with Retry-After (and a JSON-RPC error for the client to show).
    const overLimit = (key: string) =>
      Option.match(limiter, {
        onNone: () => Effect.succeed(undefined),
        onSome: (l) =>
          Effect.map(l.consume(key), (decision) =>
            decision.allowed
              ? undefined
              : rpcError(429, -32000, `Rate limit exceeded; retry after ${decision.retryAfterSeconds} s`, {
                "retry-after": String(decision.retryAfterSeconds)
              }))
      })

    const unauthorized = (request: HttpServerRequest.HttpServerRequest, message: string) =>
      rpcError(401, -32001, message, {
        "www-authenticate": `Bearer resource_metadata="${baseUrl(options, request)}${metadataPath}"`
      })

    // `ApiKey <key>` (stored hashed, refused once revoked) or `Bearer <JWT>`.
    const authenticate = (header: string | undefined): Effect.Effect<Roles.Actor | undefined> => {
      const [scheme = "", credential = ""] = (header ?? "").trim().split(/\s+/, 2)
      if (scheme.toLowerCase() === "apikey" && credential !== "") {
        return Effect.gen(function*() {
          const key = yield* users.findApiKeyByHash(ApiKeys.hash(credential))
          if (key === undefined || key.revokedAt !== null) return undefined
          const user = yield* users.get(key.userId).pipe(Effect.option)
          if (user._tag === "None") return undefined
          // Last use, at most once a minute per key: a hint for owners, not a write per request.
          const now = yield* DateTime.now
          if (key.lastUsedAt === null || DateTime.toEpochMillis(now) - DateTime.toEpochMillis(key.lastUsedAt) > 60_000) {
            yield* users.saveApiKey({ ...key, lastUsedAt: now }).pipe(Effect.ignore)
          }
          const actor: Roles.Actor = { userId: user.value.id, email: user.value.email, groups: [] }
          return actor
        })
      }
      if (scheme.toLowerCase() === "bearer" && credential !== "") {
        return verifier.verify(credential).pipe(Effect.catch(() => Effect.succeed(undefined)))
      }
      return Effect.succeed(undefined)
    }

    // One schema validator for every request's server (the SDK would build an Ajv instance per
    // server, half a millisecond each; it validates only elicitation forms, which modelgate never sends).
    const jsonSchemaValidator = new AjvJsonSchemaValidator()

    const makeServer = (call: McpTools.CallContext, request: Context.Context<never>) => {
      const server = new Server({ name: "modelgate", version: "0.0.0" }, {
        capabilities: { tools: {} },
        instructions: McpTools.instructions,
        jsonSchemaValidator
      })
      // A tool runs in the request's context over the layer's services: its spans are children of the
      // request's span and carry its annotations (the request id), its logs the request's annotations.
      const context = Context.merge(request, services)
      // Protocol misuse rejects with -32602 (the SDK turns a thrown McpError into a JSON-RPC error).
      const run = (tool: Effect.Effect<McpTools.ToolResult, McpTools.InvalidParams, McpTools.Services>) =>
        Effect.runPromiseWith(context)(Effect.result(tool)).then((result) => {
          if (Result.isFailure(result)) throw new McpError(ErrorCode.InvalidParams, result.failure.message)
          return result.success
        })
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: McpTools.definitions.map((t) => ({ ...t })) }))
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        const args = request.params.arguments
        switch (request.params.name) {
          case "execute_query":
            return run(McpTools.executeQuery(call, args))
          case "get_context":
            return run(McpTools.getContext(call, args))
          default:
            throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`)
        }
      })
      return server
    }

    const handle = (workspace: string | undefined) => (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const base = baseUrl(options, request)
        // Browsers send Origin: only the server's own origin and configured ones may call (DNS rebinding).
        const origin = request.headers["origin"]
        // The base URL may carry the path a host mounts the routes under: compare origins only.
        if (origin !== undefined && origin !== new URL(base).origin && !(options.allowedOrigins ?? []).includes(origin)) {
          return rpcError(403, -32000, `Origin ${origin} is not allowed`)
        }
        // JSON responses only: no server-initiated stream (GET); sessions are signed, not stored, so a
        // client cannot end one early (DELETE answers 405, as the protocol allows) and it simply expires.
        if (request.method !== "POST") {
          return rpcError(405, -32000, "Method not allowed: send JSON-RPC requests with POST", { allow: "POST" })
        }
        const actor = yield* authenticate(request.headers["authorization"])
        if (actor === undefined) {
          // Failed attempts are counted per address, so guessing keys or tokens is throttled too.
          const address = Option.getOrElse(request.remoteAddress, () => "unknown")
          const limited = yield* overLimit(`ip:${address} mcp`)
          return limited ?? unauthorized(request, "Authentication required: Authorization: ApiKey <key> or Bearer <token>")
        }
        const limited = yield* overLimit(`user:${actor.userId} mcp`)
        if (limited !== undefined) return limited
        if (workspace !== undefined) {
          const allowed = yield* access.authorize(actor, "workspace.read", Roles.workspaceScope(options.organization, workspace), `Workspace ${workspace}`).pipe(
            Effect.andThen(organizations.getWorkspace(options.organization, workspace)),
            Effect.as(true),
            Effect.catch(() => Effect.succeed(false))
          )
          if (!allowed) return rpcError(404, -32000, `Workspace ${workspace} not found`)
        }
        const body = yield* request.json.pipe(Effect.option)
        if (body._tag === "None") return rpcError(400, ErrorCode.ParseError, "Parse error: the body is not JSON")
        const path = workspace === undefined ? "/mcp" : `/mcp/workspace/${workspace}`
        const initializing = isInitialize(body.value)
        const sessionId = request.headers["mcp-session-id"]
        if (!initializing && sessionId !== undefined) {
          const now = yield* Clock.currentTimeMillis
          const checked = McpSession.verify(sessionKey, sessionId, { principal: actor.userId, path, now })
          // 404 tells the client to start a new session (MCP, Streamable HTTP, session management).
          if (!checked.ok) return rpcError(404, -32001, `Session not found (${checked.reason.replace("_", " ")}): initialize again`)
          const version = request.headers["mcp-protocol-version"]
          if (version !== undefined && version !== checked.session.protocolVersion) {
            return rpcError(400, -32000, `MCP-Protocol-Version ${version} differs from the session's ${checked.session.protocolVersion}`)
          }
        }
        const server = makeServer({ actor, organization: options.organization, workspace, rowLimit }, yield* Effect.context<never>())
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
        const headers = new Headers()
        for (const [name, value] of Object.entries(request.headers)) headers.set(name, value)
        const response = yield* Effect.promise(async () => {
          await server.connect(transport)
          try {
            const res = await transport.handleRequest(
              new Request(`${base}${request.url}`, { method: "POST", headers, body: JSON.stringify(body.value) }),
              { parsedBody: body.value }
            )
            return { status: res.status, headers: [...res.headers], text: await res.text() }
          } finally {
            await server.close()
          }
        })
        const responseHeaders: Record<string, string> = Object.fromEntries(response.headers.filter(([name]) => name !== "content-length"))
        const negotiated = initializing && response.status === 200 ? protocolVersionOf(response.text) : undefined
        if (negotiated !== undefined) {
          const now = yield* Clock.currentTimeMillis
          responseHeaders["mcp-session-id"] = McpSession.issue(sessionKey, {
            principal: actor.userId,
            path,
            protocolVersion: negotiated,
            expiresAt: now + sessionTtl
          })
        }
        return response.text === ""
          ? HttpServerResponse.empty({ status: response.status, headers: responseHeaders })
          : HttpServerResponse.text(response.text, {
            status: response.status,
            headers: responseHeaders,
            contentType: responseHeaders["content-type"] ?? "application/json"
          })
      })

    // RFC 9728: the MCP URL as the resource, its authorization servers, header-borne tokens only.
    const metadata = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.sync(() => {
        const base = baseUrl(options, request)
        const suffix = request.url.startsWith(`${metadataPath}/`) ? request.url.slice(metadataPath.length).split("?")[0] ?? "" : "/mcp"
        return HttpServerResponse.jsonUnsafe({
          resource: `${base}${suffix}`,
          authorization_servers: [...(options.authorizationServers ?? [])],
          bearer_methods_supported: ["header"],
          resource_name: "modelgate MCP server"
        })
      })

    return Layer.mergeAll(
      HttpRouter.add("*", "/mcp", handle(undefined)),
      HttpRouter.add("*", "/mcp/workspace/:workspace", (request) =>
        Effect.flatMap(HttpRouter.params, (params) => handle(params["workspace"] ?? "")(request))),
      HttpRouter.add("GET", `${metadataPath}/*`, metadata)
    )
  }))
