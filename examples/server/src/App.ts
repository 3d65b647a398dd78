/**
 * The example server's application: core + sql + connections + malloy + retrieval + jobs + http +
 * mcp composed into one request handler over storage (the PostgreSQL server of `databaseUrl`, or
 * embedded PGlite in `dataDir`), with the seed loaded. `Server` imports this module only once it
 * listens, so that `/health` answers while these modules load and storage opens.
 */
import { DateTime, Effect, Layer, Redacted, Ref } from "effect"
import { FetchHttpClient, HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { Scope } from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ApiKeys, ConnectionService, RateLimiter, SecretCipher, UserRepo } from "@modelgate/core"
import { AdminHandlers, AdminServer, TokenVerifier } from "@modelgate/http"
import { Materializer, Runtime } from "@modelgate/malloy"
import { BuildPlan, ConnectionIndexing, JobsCluster, JobsMigrations, JobsPipelines, Schedules, VersionBuild } from "@modelgate/jobs"
import { McpServer } from "@modelgate/mcp"
import { ContextIndex as RetrievalContextIndex, OpenAiEmbeddings, OpenAiPhrases, Retrieval } from "@modelgate/retrieval"
import { OutboxMailer, Pglite, SqlRateLimiter, Storage } from "@modelgate/sql"
import { Testers } from "@modelgate/connections"
import { DataDir, Seed } from "@modelgate/cli"
import { demoSeed, type Options, type Started } from "./Server.ts"

// The development API key: created once for `userId`, its plaintext kept only in the data
// directory's owner-only `api-key` file (only its hash is stored); in memory, a fresh one per start.
const developmentApiKey = (dataDir: string | undefined, userId: string) =>
  Effect.gen(function*() {
    const key = yield* DataDir.persisted(dataDir, "api-key", ApiKeys.generate)
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

/** The application once built: its handler, what it tells the operator, and a storage check. */
export interface App {
  readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest | Scope>
  readonly started: Started
  /** `SELECT 1` on storage: fails when storage does not answer. */
  readonly ping: Effect.Effect<void, unknown>
}

/**
 * Builds the application in the current scope: opens storage and migrates, loads the seed (telling
 * `phase` what it is doing), starts the jobs, and returns the routes' handler.
 */
export const make = (options: Options, phase: (doing: string) => Effect.Effect<void>): Effect.Effect<App, unknown, Scope> =>
  Effect.gen(function*() {
    const { baseDir, seed } = yield* Seed.read(options.seedPath ?? demoSeed)
    const embedded = options.databaseUrl === undefined
    if (!embedded && options.secretKeys === undefined) {
      return yield* Effect.die(new Error("MODELGATE_SECRET_KEYS is required with DATABASE_URL (see docs/operations.md)"))
    }
    const secretKeys = options.secretKeys ?? (yield* DataDir.developmentSecretKeys(options.dataDir))
    const keyring = SecretCipher.parseKeyring(secretKeys)
    if (keyring._tag === "Failure") return yield* Effect.die(new Error(`MODELGATE_SECRET_KEYS: ${keyring.failure}`))
    const jwtSecret = Redacted.make(seed.auth?.jwtSecret ?? (yield* DataDir.persisted(options.dataDir, DataDir.jwtSecretFile, () => DataDir.randomSecret(48))))
    const issuer = seed.auth?.issuer
    const audience = seed.auth?.audience

    const client = embedded
      ? Pglite.layer({ dataDir: options.dataDir })
      : Storage.layerPostgres({ url: Redacted.make(options.databaseUrl ?? ""), maxConnections: options.poolSize ?? 10 })
    const storage = Storage.layer.pipe(
      Layer.provideMerge(SecretCipher.SecretCipher.layerAesGcm(keyring.success)),
      Layer.provideMerge(client)
    )
    const ports = Layer.mergeAll(storage, Testers.layer({ connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000 }))
    // The runtime reads environment connections through the ConnectionRepo of `ports` (storage).
    const runtime = Runtime.layer({ connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000 })
    // get_context's index: built by the version build at publish, searched by the MCP tool.
    // Remote phrase and embedding models (OpenAI-compatible) when MODELGATE_LLM_* / MODELGATE_EMBEDDINGS_*
    // are set; offline otherwise, and offline again whenever a remote call fails.
    const remote = yield* Effect.all([OpenAiPhrases.fromConfig, OpenAiEmbeddings.fromConfig]).pipe(
      Effect.provide(FetchHttpClient.layer),
      Effect.mapError((error) => new Error(`Invalid configuration: ${error.message}`)),
      Effect.orDie
    )
    const retrieval = Retrieval.layer({ ...remote[0], ...remote[1] }).pipe(Layer.provideMerge(runtime))
    // Background jobs: one runner in this process (embedded storage, or a single instance), or a
    // runner among several sharing the PostgreSQL server when MODELGATE_RUNNER_PORT is set.
    const cluster = options.runner === undefined
      ? JobsCluster.layerSingle()
      : JobsCluster.layerRunner({ host: options.runner.host, port: options.runner.port })
    const jobs = Layer.mergeAll(
      VersionBuild.layer,
      ConnectionIndexing.layer,
      Schedules.layerRefresh,
      Schedules.layerCron,
      JobsPipelines.layer
    ).pipe(
      // Persist sources on PostgreSQL and MySQL connections are built at publish and on schedule.
      Layer.provide(Layer.mergeAll(
        RetrievalContextIndex.layer,
        BuildPlan.Materializer.layerFrom(Materializer.make({ connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000 }))
      )),
      Layer.provideMerge(retrieval),
      Layer.provideMerge(cluster),
      Layer.provide(Layer.effectDiscard(Effect.orDie(JobsMigrations.run)))
    )
    const services = AdminServer.layerServices.pipe(
      Layer.provideMerge(jobs),
      Layer.provideMerge(ports),
      Layer.provide(Layer.succeed(ConnectionService.ConnectionTemplates, options.templates ?? {}))
    )

    const organization = options.organization ?? seed.organizations[0]?.name ?? "default"
    // Tokens for the MCP server name the MCP resource as their audience (RFC 8707): an admin token is not one.
    const mcpAudience = options.mcpAudience ?? `http://${options.host}:${options.port}/mcp`
    // Session ids are signed with a key derived from the JWT secret, which instances share already.
    const developmentTokens = TokenVerifier.TokenVerifier.layerHs256({ secret: jwtSecret, issuer, audience: mcpAudience })
    // OAuth: access tokens of the configured authorization server (JWKS), for the MCP resource only;
    // a token it does not accept is tried as a development token.
    const oauth = options.oauth
    const mcpTokens = oauth === undefined ? developmentTokens : Layer.effect(
      TokenVerifier.TokenVerifier,
      Effect.gen(function*() {
        const external = yield* Effect.provide(
          TokenVerifier.TokenVerifier,
          TokenVerifier.TokenVerifier.layerJwks({ url: oauth.jwksUrl, issuer: oauth.issuer, audience: mcpAudience })
        )
        const local = yield* Effect.provide(TokenVerifier.TokenVerifier, developmentTokens)
        return TokenVerifier.TokenVerifier.of({ verify: (token) => external.verify(token).pipe(Effect.catch(() => local.verify(token))) })
      })
    )
    const authorizationServers = options.authorizationServers ?? (oauth === undefined ? undefined : [oauth.issuer])
    const mcp = McpServer.layerRoutes({ organization, authorizationServers, sessionSecret: Redacted.value(jwtSecret) }).pipe(
      Layer.provide(mcpTokens)
    )
    const routes = Layer.mergeAll(AdminServer.layerRoutes, mcp).pipe(
      Layer.provide(TokenVerifier.TokenVerifier.layerHs256({ secret: jwtSecret, issuer, audience })),
      // One instance counts in memory; instances sharing a PostgreSQL server share their budgets there.
      Layer.provide(
        embedded
          ? RateLimiter.RateLimiter.layerMemory({ limit: options.rateLimit ?? 600, windowSeconds: 60 })
          : SqlRateLimiter.layer({ limit: options.rateLimit ?? 600, windowSeconds: 60 })
      ),
      Layer.provide(Layer.succeed(AdminHandlers.AdminHost, { suffix: options.adminHost }))
    )

    const started = yield* Ref.make<{ readonly started: Started; readonly ping: Effect.Effect<void, unknown> } | undefined>(undefined)
    const seeded = Layer.effectDiscard(Effect.gen(function*() {
      yield* phase("loading the seed")
      const organization = yield* Seed.apply(seed, baseDir)
      const adminUser = seed.users?.[0]
      const token = yield* Effect.promise(() =>
        TokenVerifier.signHs256(jwtSecret, { sub: adminUser?.id ?? "admin", ...(adminUser === undefined ? {} : { email: adminUser.email }) }, { issuer, audience })
      )
      const apiKey = adminUser === undefined ? undefined : yield* developmentApiKey(options.dataDir, adminUser.id)
      const sql = yield* SqlClient.SqlClient
      yield* phase("starting the jobs and routes")
      yield* Ref.set(started, {
        started: { url: `http://${options.host}:${options.port}`, organization, token, apiKey, jwtSecret, issuer, audience, mcpAudience },
        ping: Effect.asVoid(sql`SELECT 1`)
      })
    }))

    const mailer = options.smtpUrl === undefined
      ? Layer.empty
      : OutboxMailer.layer({ url: Redacted.make(options.smtpUrl), from: options.smtpFrom ?? "modelgate@localhost" })

    const handler = yield* HttpRouter.toHttpEffect(Layer.merge(routes, mailer).pipe(
      Layer.provideMerge(seeded),
      Layer.provideMerge(services),
      Layer.provide(NodeHttpServer.layerHttpServices)
    ))
    const built = yield* Ref.get(started)
    if (built === undefined) return yield* Effect.die(new Error("the seed was not loaded"))
    return { handler, started: built.started, ping: built.ping }
  })
