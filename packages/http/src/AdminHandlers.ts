/**
 * The admin API served over core's services: each handler reads the decoded
 * request and the CurrentActor, calls one service method, and renders core's
 * errors as `{ code, message }`. The middleware implementations (request errors,
 * bearer authentication, rate limits) live here too.
 */
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiMiddleware } from "effect/http-api"
import { ApiKeyService, ConnectionService, Errors, PackageService, PermissionService, RateLimiter, type Roles } from "@modelgate/core"
import { AdminApi, packageResource, RateLimit, RequestErrors } from "./AdminApi.ts"
import * as AdminErrors from "./AdminErrors.ts"
import { Authentication, CurrentActor } from "./Authentication.ts"
import * as PackageFiles from "./PackageFiles.ts"
import { TokenVerifier } from "./TokenVerifier.ts"

/**
 * The host suffix under which `<organization>.<suffix>` names an organization
 * (the spec's `https://<organization>.<admin_host>/api/v0/`). Unset: the host
 * names none, and the path alone decides.
 */
export class AdminHost extends Context.Reference<{ readonly suffix: string | undefined }>("@modelgate/http/AdminHost", {
  defaultValue: () => ({ suffix: undefined })
}) {
  /** From `MODELGATE_ADMIN_HOST` (e.g. `admin.example.com`). */
  static readonly layerConfig = Layer.effect(
    AdminHost,
    Effect.map(Config.option(Config.String("MODELGATE_ADMIN_HOST")), (suffix) => ({ suffix: Option.getOrUndefined(suffix) }))
  )
}

// On `<org>.<admin host>` the path's organization must be the host's: another one does not exist there.
const checkHost = Effect.fnUntraced(function*(organizationName: string) {
  const { suffix } = yield* AdminHost
  if (suffix === undefined) return
  const request = yield* HttpServerRequest.HttpServerRequest
  const host = (request.headers["host"] ?? "").split(":")[0]?.toLowerCase() ?? ""
  if (!host.endsWith(`.${suffix}`)) return
  const named = host.slice(0, -(suffix.length + 1))
  if (named !== organizationName.toLowerCase()) {
    return yield* new Errors.ResourceNotFound({ message: `Organization ${organizationName} not found` })
  }
})

const render = <A, R>(self: Effect.Effect<A, Errors.ApiError, R>) => Effect.mapError(self, AdminErrors.fromDomain)

/** Runs `f` for the authenticated caller after the host check, rendering core's errors. */
const asCaller = <A, R>(organizationName: string, f: (actor: typeof CurrentActor.Service) => Effect.Effect<A, Errors.ApiError, R>) =>
  render(Effect.andThen(checkHost(organizationName), Effect.flatMap(CurrentActor, f)))

const env = (p: { readonly organizationName: string; readonly environmentName: string }) => ({
  organization: p.organizationName,
  environment: p.environmentName
})
const pkg = (p: { readonly organizationName: string; readonly environmentName: string; readonly packageName: string }) => ({
  ...env(p),
  package: p.packageName
})

const ConnectionsHandlers = HttpApiBuilder.group(AdminApi, "connections", Effect.fn(function*(handlers) {
  const service = yield* ConnectionService.ConnectionService
  const ref = (p: { readonly organizationName: string; readonly environmentName: string; readonly connectionName: string }) => ({ ...env(p), name: p.connectionName })
  return handlers.handleAll({
    list: ({ params }) => asCaller(params.organizationName, (actor) => service.list(actor, env(params))),
    create: ({ params, payload }) => asCaller(params.organizationName, (actor) => service.create(actor, env(params), payload)),
    get: ({ params }) => asCaller(params.organizationName, (actor) => service.get(actor, ref(params))),
    update: ({ params, payload }) => asCaller(params.organizationName, (actor) => service.update(actor, ref(params), payload)),
    remove: ({ params }) => asCaller(params.organizationName, (actor) => service.remove(actor, ref(params)))
  })
}))

const PackagesHandlers = HttpApiBuilder.group(AdminApi, "packages", Effect.fn(function*(handlers) {
  const service = yield* PackageService.PackageService
  return handlers.handleAll({
    list: ({ params }) =>
      asCaller(params.organizationName, (actor) => service.listPackages(actor, env(params))).pipe(
        Effect.map((all) => all.map(packageResource))
      ),
    create: ({ params, payload }) =>
      asCaller(params.organizationName, (actor) => service.createPackage(actor, env(params), payload)).pipe(
        Effect.map(packageResource)
      ),
    get: ({ params }) =>
      asCaller(params.organizationName, (actor) => service.getPackage(actor, pkg(params))).pipe(
        Effect.map(packageResource)
      )
  })
}))

const VersionsHandlers = HttpApiBuilder.group(AdminApi, "versions", Effect.fn(function*(handlers) {
  const service = yield* PackageService.PackageService
  const ref = (p: { readonly organizationName: string; readonly environmentName: string; readonly packageName: string; readonly versionId: string }) => ({ ...pkg(p), version: p.versionId })
  return handlers.handleAll({
    list: ({ params }) => asCaller(params.organizationName, (actor) => service.listVersions(actor, pkg(params))),
    publish: ({ params, query, payload }) =>
      render(Effect.gen(function*() {
        yield* checkHost(params.organizationName)
        const actor = yield* CurrentActor
        const files = yield* PackageFiles.fromTarGz(payload)
        return yield* service.publish(actor, pkg(params), query.id, files)
      })),
    get: ({ params }) => asCaller(params.organizationName, (actor) => service.getVersion(actor, ref(params))),
    update: ({ params, payload }) => asCaller(params.organizationName, (actor) => service.updateStatus(actor, ref(params), payload)),
    promote: ({ params }) => asCaller(params.organizationName, (actor) => service.promote(actor, ref(params)))
  })
}))

const PermissionsHandlers = HttpApiBuilder.group(AdminApi, "permissions", Effect.fn(function*(handlers) {
  const service = yield* PermissionService.PermissionService
  return handlers.handleAll({
    list: ({ params }) => asCaller(params.organizationName, (actor) => service.list(actor, pkg(params))),
    // Defaults: requestPermission=false, notifyPeople=false (see docs/decisions.md).
    create: ({ params, payload, query }) =>
      asCaller(params.organizationName, (actor) =>
        service.create(actor, pkg(params), payload, {
          requestPermission: query.requestPermission === "true",
          notifyPeople: query.notifyPeople === "true"
        })).pipe(Effect.map((created) => created.permission))
  })
}))

const ApiKeysHandlers = HttpApiBuilder.group(AdminApi, "apiKeys", Effect.fn(function*(handlers) {
  const service = yield* ApiKeyService.ApiKeyService
  return handlers.handleAll({
    list: () => Effect.flatMap(CurrentActor, (actor) => service.list(actor)),
    create: ({ payload }) => render(Effect.flatMap(CurrentActor, (actor) => service.create(actor, payload.name))),
    revoke: ({ params }) => render(Effect.flatMap(CurrentActor, (actor) => service.revoke(actor, params.keyId)))
  })
}))

/** Renders request decoding failures as 400 VALIDATION_ERROR, naming where the request is wrong. */
export const RequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (error) => {
  const where = { Params: "path", Query: "query string", Headers: "headers", Payload: "body", Body: "response", ResponseHeaders: "response" }[error.kind]
  return Effect.fail(AdminErrors.validation(`Invalid request ${where}: ${error.cause.message}`))
})

/** Bearer authentication through the TokenVerifier. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const verifier = yield* TokenVerifier
    return Authentication.of({
      bearer: Effect.fn(function*(httpEffect, { credential }) {
        const token = Redacted.value(credential)
        if (token === "") return yield* AdminErrors.fromDomain(new Errors.AuthenticationRequired({ message: "A bearer token is required" }))
        const actor = yield* Effect.mapError(verifier.verify(token), AdminErrors.fromDomain)
        return yield* Effect.provideService(httpEffect, CurrentActor, actor)
      })
    })
  })
)

/** The per-caller, per-route rate limit through the RateLimiter. */
export const RateLimitLive = Layer.effect(
  RateLimit,
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    return RateLimit.of((httpEffect, { endpoint, group }) =>
      Effect.gen(function*() {
        const actor = yield* Effect.serviceOption(CurrentActor)
        const request = yield* HttpServerRequest.HttpServerRequest
        const caller = Option.match(actor, { onNone: () => `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`, onSome: (a) => `user:${a.userId}` })
        const decision = yield* limiter.consume(`${caller} ${group.identifier}.${endpoint.name}`)
        if (!decision.allowed) {
          return HttpServerResponse.jsonUnsafe(
            { code: "RATE_LIMIT_EXCEEDED", message: `Rate limit exceeded; retry after ${decision.retryAfterSeconds} s` },
            { status: 429, headers: { "retry-after": String(decision.retryAfterSeconds) } }
          )
        }
        return yield* httpEffect
      }))
  })
)

/**
 * Authentication by the host application's own session instead of a bearer JWT: `resolve` names
 * the caller of a request from whatever the host's login set (a cookie, a header), or answers
 * `undefined`, which is 401 AUTHENTICATION_REQUIRED. Only this middleware reads the request.
 */
export const layerSessionAuthentication = <R = never>(
  resolve: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Roles.Actor | undefined, never, R>
): Layer.Layer<Authentication, never, R> =>
  Layer.effect(
    Authentication,
    Effect.gen(function*() {
      const context = yield* Effect.context<R>()
      return Authentication.of({
        // The bearer scheme stays in the definition (clients and OpenAPI); its credential is not read here.
        bearer: Effect.fn(function*(httpEffect) {
          const request = yield* HttpServerRequest.HttpServerRequest
          const actor = yield* Effect.provideContext(resolve(request), context)
          if (actor === undefined) return yield* AdminErrors.fromDomain(new Errors.AuthenticationRequired({ message: "Authentication required: sign in first" }))
          return yield* Effect.provideService(httpEffect, CurrentActor, actor)
        })
      })
    })
  )

/** Every handler with the request-error and rate-limit middleware; the host provides `Authentication`. */
export const layerWithoutAuthentication = Layer.mergeAll(ConnectionsHandlers, PackagesHandlers, VersionsHandlers, PermissionsHandlers, ApiKeysHandlers).pipe(
  Layer.provideMerge(Layer.mergeAll(RequestErrorsLive, RateLimitLive))
)

/** Every handler of the admin API; needs core's services, the TokenVerifier and the RateLimiter. */
export const layer = layerWithoutAuthentication.pipe(Layer.provideMerge(AuthenticationLive))
