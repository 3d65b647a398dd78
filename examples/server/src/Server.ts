/**
 * The example server: core + sql + http composed into one HTTP server. Storage is
 * the PostgreSQL server of `databaseUrl`, or embedded PGlite in `dataDir`; the
 * seed (a file, or the built-in demo) is loaded at start; `/health` answers once
 * it serves. Development secrets (JWT secret, secret keys) are created once in the
 * data directory when not configured.
 */
import { DateTime, Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { createServer } from "node:http"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { ApiKeys, ConnectionService, type ConnectionUpdate, RateLimiter, SecretCipher, UserRepo } from "@modelgate/core"
import { AdminHandlers, AdminServer, TokenVerifier } from "@modelgate/http"
import { Runtime } from "@modelgate/malloy"
import { McpServer } from "@modelgate/mcp"
import { OutboxMailer, Pglite, SqlRateLimiter, Storage } from "@modelgate/sql"
import { Testers } from "@modelgate/connections"
import * as Seed from "./Seed.ts"

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
}

/** The built-in demo seed. */
export const demoSeed = resolve(import.meta.dirname, "../demo/seed.json")

const random = (bytes: number) => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))))

// A value kept in the data directory: created once (owner-only), then reused.
const persisted = (dataDir: string | undefined, file: string, make: () => string) =>
  Effect.promise(async () => {
    if (dataDir === undefined) return make()
    await mkdir(dataDir, { recursive: true })
    const path = join(dataDir, file)
    try {
      return (await readFile(path, "utf8")).trim()
    } catch {
      const value = make()
      await writeFile(path, `${value}\n`, { mode: 0o600 })
      await chmod(path, 0o600)
      return value
    }
  })

// The development API key: created once for `userId`, its plaintext kept only in the data
// directory's owner-only `api-key` file (only its hash is stored); in memory, a fresh one per start.
const developmentApiKey = (dataDir: string | undefined, userId: string) =>
  Effect.gen(function*() {
    const key = yield* persisted(dataDir, "api-key", ApiKeys.generate)
    const users = yield* UserRepo.UserRepo
    const hash = ApiKeys.hash(key)
    if ((yield* users.findApiKeyByHash(hash)) === undefined) {
      const now = yield* DateTime.now
      yield* users.insertApiKey({ id: `dev-${hash.slice(7, 19)}`, userId, name: "development", hash, createdAt: now, revokedAt: null, lastUsedAt: null }).pipe(
        Effect.catch(() => Effect.void)
      )
    }
    return key
  })

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

/** The whole server as a layer; `onStart` receives the URLs and a development token. */
export const layer = (options: Options, onStart: (started: Started) => Effect.Effect<void> = () => Effect.void): Layer.Layer<never, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const { baseDir, seed } = yield* Seed.read(options.seedPath ?? demoSeed)
    const embedded = options.databaseUrl === undefined
    if (!embedded && options.secretKeys === undefined) {
      return yield* Effect.die(new Error("MODELGATE_SECRET_KEYS is required with DATABASE_URL (see docs/operations.md)"))
    }
    const secretKeys = options.secretKeys ?? `*dev=${yield* persisted(options.dataDir, "secret-key", () => random(32))}`
    const keyring = SecretCipher.parseKeyring(secretKeys)
    if (keyring._tag === "Failure") return yield* Effect.die(new Error(`MODELGATE_SECRET_KEYS: ${keyring.failure}`))
    const jwtSecret = Redacted.make(seed.auth?.jwtSecret ?? (yield* persisted(options.dataDir, "jwt-secret", () => random(48))))
    const issuer = seed.auth?.issuer
    const audience = seed.auth?.audience

    const client = embedded
      ? Pglite.layer({ dataDir: options.dataDir })
      : Storage.layerPostgres({ url: Redacted.make(options.databaseUrl ?? ""), maxConnections: 10 })
    const storage = Storage.layer.pipe(
      Layer.provideMerge(SecretCipher.SecretCipher.layerAesGcm(keyring.success)),
      Layer.provideMerge(client)
    )
    const ports = Layer.mergeAll(storage, Testers.layer({ connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000 }))
    const services = Layer.merge(AdminServer.layerServices, Runtime.layer({})).pipe(
      Layer.provideMerge(ports),
      Layer.provide(Layer.succeed(ConnectionService.ConnectionTemplates, options.templates ?? {}))
    )

    const health = HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" }))
    const organization = options.organization ?? seed.organizations[0]?.name ?? "default"
    // Tokens for the MCP server name the MCP resource as their audience (RFC 8707): an admin token is not one.
    const mcpAudience = options.mcpAudience ?? `http://${options.host}:${options.port}/mcp`
    const mcp = McpServer.layerRoutes({ organization, authorizationServers: options.authorizationServers }).pipe(
      Layer.provide(TokenVerifier.TokenVerifier.layerHs256({ secret: jwtSecret, issuer, audience: mcpAudience }))
    )
    const routes = Layer.mergeAll(AdminServer.layerRoutes, mcp, health).pipe(
      Layer.provide(TokenVerifier.TokenVerifier.layerHs256({ secret: jwtSecret, issuer, audience })),
      // One instance counts in memory; instances sharing a PostgreSQL server share their budgets there.
      Layer.provide(
        embedded
          ? RateLimiter.RateLimiter.layerMemory({ limit: options.rateLimit ?? 600, windowSeconds: 60 })
          : SqlRateLimiter.layer({ limit: options.rateLimit ?? 600, windowSeconds: 60 })
      ),
      Layer.provide(Layer.succeed(AdminHandlers.AdminHost, { suffix: options.adminHost }))
    )

    const seeded = Layer.effectDiscard(Effect.gen(function*() {
      const organization = yield* Seed.apply(seed, baseDir)
      const adminUser = seed.users?.[0]
      const token = yield* Effect.promise(() =>
        TokenVerifier.signHs256(jwtSecret, { sub: adminUser?.id ?? "admin", ...(adminUser === undefined ? {} : { email: adminUser.email }) }, { issuer, audience })
      )
      const apiKey = adminUser === undefined ? undefined : yield* developmentApiKey(options.dataDir, adminUser.id)
      yield* onStart({ url: `http://${options.host}:${options.port}`, organization, token, apiKey, jwtSecret, issuer, audience, mcpAudience })
    }))

    const mailer = options.smtpUrl === undefined
      ? Layer.empty
      : OutboxMailer.layer({ url: Redacted.make(options.smtpUrl), from: options.smtpFrom ?? "modelgate@localhost" })

    return Layer.merge(HttpRouter.serve(routes, { disableLogger: options.requestLog === false }), mailer).pipe(
      Layer.provideMerge(seeded),
      Layer.provideMerge(services),
      Layer.provide(NodeHttpServer.layer(createServer, { port: options.port, host: options.host })),
      Layer.provide(NodeServices.layer)
    )
  }))

