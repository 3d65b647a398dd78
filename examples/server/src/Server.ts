/**
 * The example server: core + sql + http composed into one HTTP server. Storage is
 * the PostgreSQL server of `databaseUrl`, or embedded PGlite in `dataDir`; the
 * seed (a file, or the built-in demo) is loaded at start; `/health` answers once
 * it serves. Development secrets (JWT secret, secret keys) are created once in the
 * data directory when not configured.
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { createServer } from "node:http"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { ConnectionService, type ConnectionUpdate, RateLimiter, SecretCipher } from "@modelgate/core"
import { AdminHandlers, AdminServer, TokenVerifier } from "@modelgate/http"
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
  /** E-mail delivery of notifications (`smtp://…`); without it they stay in the outbox table and the log. */
  readonly smtpUrl?: string | undefined
  readonly smtpFrom?: string | undefined
  /** Connection templates offered on create (`template: "bq_demo"`): settings by template name. */
  readonly templates?: ConnectionUpdate.Templates | undefined
  /** One log line per request (default true). */
  readonly requestLog?: boolean | undefined
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

/** What the started server tells its operator. */
export interface Started {
  readonly url: string
  readonly organization: string | undefined
  readonly token: string
  readonly jwtSecret: Redacted.Redacted<string>
  readonly issuer: string | undefined
  readonly audience: string | undefined
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
    const services = AdminServer.layerServices.pipe(
      Layer.provideMerge(ports),
      Layer.provide(Layer.succeed(ConnectionService.ConnectionTemplates, options.templates ?? {}))
    )

    const health = HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" }))
    const routes = Layer.mergeAll(AdminServer.layerRoutes, health).pipe(
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
      yield* onStart({ url: `http://${options.host}:${options.port}`, organization, token, jwtSecret, issuer, audience })
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

