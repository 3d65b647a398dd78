/**
 * The example server: listens first, then builds the application (`App`: storage, migrations, the
 * seed, jobs, admin API and MCP routes) behind it. `/health` (liveness) answers from the first
 * moment; `/ready` answers 503 with the reason until the application is built and then 200 while
 * storage answers `SELECT 1`; other routes answer 503 INTERNAL_ERROR with `Retry-After` until then.
 * Every request gets a request id, one log line and metrics (`RequestLog`).
 */
import { Effect, Layer, Ref, Scope } from "effect"
import type { Redacted } from "effect"
import { HttpServer, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { createServer } from "node:http"
import { resolve } from "node:path"
import type { ConnectionUpdate } from "@modelgate/core"
import { RequestLog } from "@modelgate/http"
import type { App } from "./App.ts"

/** How the server is set up. */
export interface Options {
  readonly port: number
  readonly host: string
  /** A PostgreSQL server; absent: embedded PGlite in `dataDir` (or in memory when `dataDir` is absent too). */
  readonly databaseUrl?: string | undefined
  readonly dataDir?: string | undefined
  readonly seedPath?: string | undefined
  readonly secretKeys?: string | undefined
  /** Requests per minute per caller and route. */
  readonly rateLimit?: number | undefined
  readonly connectTimeoutMillis?: number | undefined
  /** `<organization>.<adminHost>` names an organization (the spec's base URL); unset: the path decides. */
  readonly adminHost?: string | undefined
  /** The organization the MCP server serves; defaults to the seed's first organization. */
  readonly organization?: string | undefined
  /** E-mail delivery of notifications (`smtp://…`); without it they stay in the outbox table and the log. */
  readonly smtpUrl?: string | undefined
  readonly smtpFrom?: string | undefined
  /** Connection templates offered on create (`template: "bq_demo"`): settings by template name. */
  readonly templates?: ConnectionUpdate.Templates | undefined
  /** One log line per request (default true). */
  readonly requestLog?: boolean | undefined
  /** The audience of bearer tokens for the MCP server (the MCP resource); default `http://<host>:<port>/mcp`. */
  readonly mcpAudience?: string | undefined
  /** OAuth authorization servers announced to MCP clients (RFC 9728 metadata). */
  readonly authorizationServers?: ReadonlyArray<string> | undefined
  /**
   * This instance as a job runner among several on the PostgreSQL server: the address the other
   * runners reach it at. Absent: this process runs every job itself (one instance).
   */
  readonly runner?: { readonly host: string; readonly port: number } | undefined
  /** PostgreSQL connections in this instance's pool (with `databaseUrl`); defaults to 10. */
  readonly poolSize?: number | undefined
  /**
   * An OAuth 2.0 authorization server whose access tokens the MCP server accepts: its JWKS URL and
   * issuer; the audience must be the MCP resource (`mcpAudience`). Development tokens signed with
   * the server's own secret stay accepted.
   */
  readonly oauth?: { readonly jwksUrl: string; readonly issuer: string } | undefined
}

/** The built-in demo seed. */
export const demoSeed = resolve(import.meta.dirname, "../demo/seed.json")

/** What the started server tells its operator. */
export interface Started {
  readonly url: string
  readonly organization: string | undefined
  readonly token: string
  /** An API key of the seed's first user for the MCP server (created once, kept in the data directory). */
  readonly apiKey: string | undefined
  readonly jwtSecret: Redacted.Redacted<string>
  readonly issuer: string | undefined
  readonly audience: string | undefined
  readonly mcpAudience: string
}

type State =
  | { readonly _tag: "Starting"; readonly doing: string }
  | { readonly _tag: "Ready"; readonly app: App }

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => HttpServerResponse.jsonUnsafe(body, { status, headers })

// Bounds the readiness check: a storage that hangs is as unready as one that refuses.
const pingTimeout = "2 seconds"

/**
 * The whole server as a layer: it listens at once, and its build completes once the application is
 * ready; `onStart` then receives the URLs and a development token.
 */
export const layer = (options: Options, onStart: (started: Started) => Effect.Effect<void> = () => Effect.void): Layer.Layer<never, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const state = yield* Ref.make<State>({ _tag: "Starting", doing: "opening storage and running migrations" })
    // The application's resources (storage, jobs) close after the HTTP server has drained: this
    // finalizer is registered before the server's.
    const appScope = yield* Scope.fork(yield* Effect.scope)
    yield* Effect.addFinalizer((exit) => Scope.close(appScope, exit))

    const gate = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = request.url.split("?", 1)[0]
      const current = yield* Ref.get(state)
      if (request.method === "GET" && path === "/health") return json({ status: "ok" })
      if (request.method === "GET" && path === "/ready") {
        if (current._tag === "Starting") return json({ status: "starting", reason: `The server is starting: ${current.doing}` }, 503)
        return yield* current.app.ping.pipe(
          Effect.timeout(pingTimeout),
          Effect.match({
            onFailure: () => json({ status: "unavailable", reason: "Storage does not answer SELECT 1" }, 503),
            onSuccess: () => json({ status: "ready" })
          })
        )
      }
      // The spec's only server-side code, with the status that tells clients and balancers to retry.
      if (current._tag === "Starting") {
        return json({ code: "INTERNAL_ERROR", message: `The server is starting (${current.doing}); retry shortly` }, 503, { "retry-after": "1" })
      }
      return yield* current.app.handler
    })

    const listening = HttpServer.serve(RequestLog.middleware({ log: options.requestLog })(gate)).pipe(
      HttpServer.withLogAddress,
      // A query string may carry a secret: request spans record its parameter names, every value redacted.
      Layer.provide(Layer.succeed(UrlParams.CurrentRedactedNames, [/^/])),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
    )

    const application = Layer.effectDiscard(Effect.gen(function*() {
      // Loaded once the server listens: these modules (Malloy, DuckDB, PGlite, the cluster) take a while.
      const { make } = yield* Effect.promise(() => import("./App.ts"))
      const app = yield* make(options, (doing) => Ref.set(state, { _tag: "Starting", doing })).pipe(Scope.provide(appScope))
      yield* Ref.set(state, { _tag: "Ready", app })
      yield* onStart(app.started)
    }))

    return application.pipe(Layer.provideMerge(listening))
  }))
