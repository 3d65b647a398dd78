/**
 * modelgate inside the host: embedded PGlite storage, the Malloy runtime, the admin API mounted
 * under `/platform` (callers named by the host's own session, no JWT) and the MCP server at
 * `/platform/mcp` (API keys, or the host's session token as a bearer token), served by a Node
 * `(req, res)` handler that the host's own server calls for `/platform/...`.
 */
import { DateTime, Effect, Layer, type Scope } from "effect"
import { HttpRouter } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Errors, OrganizationRepo, PermissionRepo, RateLimiter, Roles, SecretCipher, UserRepo } from "@modelgate/core"
import { AdminServer, TokenVerifier } from "@modelgate/http"
import { Runtime } from "@modelgate/malloy"
import { McpServer } from "@modelgate/mcp"
import { Retrieval } from "@modelgate/retrieval"
import { Pglite, Storage } from "@modelgate/sql"
import { Testers } from "@modelgate/connections"
import type { Sessions, User } from "./Sessions.ts"

/** How the platform is set up. */
export interface Options {
  /** Where the host is reached from outside, e.g. `http://127.0.0.1:8080`. */
  readonly publicUrl: string
  /** The path the platform is mounted under. */
  readonly prefix: string
  /** The organization this host runs; its environment `main` is created at start. */
  readonly organization: string
  /** `*id=<base64 of 32 bytes>`: the keys that seal connection secrets. */
  readonly secretKeys: string
  /** The PGlite data directory; absent: in memory. */
  readonly dataDir?: string | undefined
  /** The host's users; the first is the organization's admin. */
  readonly users: ReadonlyArray<User>
  readonly sessions: Sessions
}

const actorOf = (user: User): Roles.Actor => ({ userId: user.id, email: user.email, groups: [] })

/** The host's users, organization and environment, and the first user's admin grant; idempotent. */
const bootstrap = (options: Options) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const users = yield* UserRepo.UserRepo
    const organizations = yield* OrganizationRepo.OrganizationRepo
    const permissions = yield* PermissionRepo.PermissionRepo
    const existing = (effect: Effect.Effect<unknown, Errors.Conflict>) => Effect.catchTag(effect, "Conflict", () => Effect.void)
    for (const user of options.users) yield* existing(users.insert({ id: user.id, email: user.email, createdAt: now }))
    yield* existing(organizations.insertOrganization({ name: options.organization, createdAt: now }))
    yield* existing(organizations.insertEnvironment({ organization: options.organization, name: "main", createdAt: now }))
    const admin = options.users[0]
    if (admin !== undefined) {
      const scope = Roles.organizationScope(options.organization)
      const principal = `user:${admin.id}`
      if (!(yield* permissions.listAt(scope)).some((g) => g.principal === principal)) {
        yield* permissions.upsert({ principal, scope, role: "admin", createdAt: now, updatedAt: now })
      }
    }
  })

/** Starts the platform for the current scope; gives the Node handler of `<prefix>/...`. */
export const start = (options: Options): Effect.Effect<(request: IncomingMessage, response: ServerResponse) => void, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const keyring = SecretCipher.parseKeyring(options.secretKeys)
    if (keyring._tag === "Failure") return yield* Effect.die(new Error(`secret keys: ${keyring.failure}`))
    const storage = Storage.layer.pipe(
      Layer.provideMerge(SecretCipher.SecretCipher.layerAesGcm(keyring.success)),
      Layer.provideMerge(Pglite.layer({ dataDir: options.dataDir }))
    )
    // get_context searches the retrieval index over the runtime's models (built on first search here;
    // a host that runs @modelgate/jobs builds it at publish).
    const semantic = Retrieval.layer().pipe(Layer.provideMerge(Runtime.layer({})))
    const services = Layer.merge(AdminServer.layerServices, semantic).pipe(
      Layer.provideMerge(Layer.merge(storage, Testers.layer({ connectTimeoutMillis: 10_000 })))
    )

    // The admin API asks the host who calls; so does the MCP server for a bearer token (the session token).
    const resolveActor = (request: { readonly headers: Readonly<Record<string, string | undefined>> }) =>
      Effect.sync(() => {
        const user = options.sessions.fromHeaders(request.headers)
        return user === undefined ? undefined : actorOf(user)
      })
    const sessionTokens = Layer.succeed(TokenVerifier.TokenVerifier, {
      verify: (token: string) => {
        const user = options.sessions.lookup(token)
        return user === undefined
          ? Effect.fail(new Errors.AuthenticationRequired({ message: "No such session" }))
          : Effect.succeed(actorOf(user))
      }
    })
    const mcp = McpServer.layerRoutes({ organization: options.organization, publicUrl: `${options.publicUrl}${options.prefix}` })
    const routes = Layer.mergeAll(AdminServer.layerRoutesWithSession(resolveActor), mcp).pipe(
      AdminServer.mount(options.prefix),
      Layer.provide(sessionTokens),
      Layer.provide(RateLimiter.RateLimiter.layerMemory({ limit: 600, windowSeconds: 60 })),
      Layer.provide(NodeHttpServer.layerHttpServices)
    )

    const context = yield* Layer.build(services)
    yield* bootstrap(options).pipe(Effect.provideContext(context))
    const app = yield* HttpRouter.toHttpEffect(routes).pipe(Effect.provideContext(context))
    const scope = yield* Effect.scope
    return yield* NodeHttpServer.makeHandler(app, { scope })
  })

/** A keyring of one random key, for a host that keeps no secrets across restarts. */
export const randomSecretKeys = (): string => `*host=${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`

