/**
 * The MCP server as routes a host application mounts beside the admin API: `POST /mcp` and
 * `POST /mcp/workspace/{workspace}` speak Streamable HTTP (JSON responses, stateless) through the
 * official SDK's web-standard transport, and `/.well-known/oauth-protected-resource` serves the
 * RFC 9728 metadata. Callers authenticate with `ApiKey <key>` or a bearer JWT; the tools are
 * in McpTools.
 */
import { DateTime, Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Access, ApiKeys, OrganizationRepo, Roles, UserRepo } from "@modelgate/core"
import { TokenVerifier } from "@modelgate/http"
import * as McpTools from "./McpTools.ts"

/** How the MCP server is set up. */
export interface Options {
  /** The organization the MCP URLs serve (the host's organization). */
  readonly organization: string
  /** The public base URL (e.g. `https://mcp.example.com`); absent: derived from the request's Host. */
  readonly publicUrl?: string | undefined
  /** OAuth authorization servers announced in the protected-resource metadata. */
  readonly authorizationServers?: ReadonlyArray<string> | undefined
  /** Browser origins allowed besides the server's own. */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /** Rows returned by execute_query; defaults to 1,000 (the runtime caps it). */
  readonly rowLimit?: number | undefined
}

/** What the routes need from the host. */
export type Requirements = McpTools.Services | UserRepo.UserRepo | TokenVerifier.TokenVerifier | HttpRouter.HttpRouter

const metadataPath = "/.well-known/oauth-protected-resource"

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers })

const baseUrl = (options: Options, request: HttpServerRequest.HttpServerRequest) =>
  (options.publicUrl ?? `http://${request.headers["host"] ?? "localhost"}`).replace(/\/+$/, "")

/** The routes: MCP endpoints and the protected-resource metadata. */
export const layerRoutes = (options: Options): Layer.Layer<never, never, Requirements> =>
  Layer.unwrap(Effect.gen(function*() {
    const services = yield* Effect.context<McpTools.Services | UserRepo.UserRepo | TokenVerifier.TokenVerifier>()
    const users = yield* UserRepo.UserRepo
    const verifier = yield* TokenVerifier.TokenVerifier
    const access = yield* Access.Access
    const organizations = yield* OrganizationRepo.OrganizationRepo
    const rowLimit = options.rowLimit ?? 1_000

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

    const makeServer = (call: McpTools.CallContext) => {
      const server = new Server({ name: "modelgate", version: "0.0.0" }, { capabilities: { tools: {} }, instructions: McpTools.instructions })
      const run = Effect.runPromiseWith(services)
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
        if (origin !== undefined && origin !== base && !(options.allowedOrigins ?? []).includes(origin)) {
          return rpcError(403, -32000, `Origin ${origin} is not allowed`)
        }
        // Stateless JSON responses: no server-initiated stream (GET) and no session to delete.
        if (request.method !== "POST") {
          return rpcError(405, -32000, "Method not allowed: send JSON-RPC requests with POST", { allow: "POST" })
        }
        const actor = yield* authenticate(request.headers["authorization"])
        if (actor === undefined) return unauthorized(request, "Authentication required: Authorization: ApiKey <key> or Bearer <token>")
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
        const server = makeServer({ actor, organization: options.organization, workspace, rowLimit })
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
        const responseHeaders = Object.fromEntries(response.headers.filter(([name]) => name !== "content-length"))
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
