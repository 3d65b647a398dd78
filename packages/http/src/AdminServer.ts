/**
 * The admin API as routes a host application mounts: the HttpApi served by the
 * handlers, its OpenAPI 3.1 document at `/api/v0/openapi.json`, a docs page at
 * `/api/v0/docs`, and core's services composed over whatever ports the host
 * provides (storage, connection tester, notifier, token verifier, rate limiter).
 */
import { Effect, Layer } from "effect"
import { type Etag, type HttpPlatform, HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { FileSystem } from "effect/FileSystem"
import type { Path } from "effect/Path"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import {
  Access,
  ApiKeyService,
  type ConnectionRepo,
  ConnectionService,
  type ConnectionTester,
  type Notifier,
  type OrganizationRepo,
  type PackageRepo,
  PackageService,
  type PackageStore,
  type PermissionRepo,
  PermissionService,
  type RateLimiter,
  type Roles,
  type UserRepo,
  type VersionRepo
} from "@modelgate/core"
import type { TokenVerifier } from "./TokenVerifier.ts"
import { AdminApi } from "./AdminApi.ts"
import * as AdminHandlers from "./AdminHandlers.ts"
import * as RequestLog from "./RequestLog.ts"

/** The ports the admin services need from the host: storage, the connection tester, the notifier. */
export type Ports =
  | ConnectionRepo.ConnectionRepo
  | VersionRepo.VersionRepo
  | PackageRepo.PackageRepo
  | PermissionRepo.PermissionRepo
  | OrganizationRepo.OrganizationRepo
  | UserRepo.UserRepo
  | PackageStore.PackageStore
  | ConnectionTester.ConnectionTester
  | Notifier.Notifier

/** Core's admin services. */
export type Services =
  | ConnectionService.ConnectionService
  | PackageService.PackageService
  | PermissionService.PermissionService
  | ApiKeyService.ApiKeyService
  | Access.Access

/** Core's admin services over the ports. */
export const layerServices: Layer.Layer<Services, never, Ports> = Layer.mergeAll(
  ConnectionService.ConnectionService.layer,
  PackageService.PackageService.layer,
  PermissionService.PermissionService.layer,
  ApiKeyService.ApiKeyService.layer
).pipe(Layer.provideMerge(Access.Access.layer))

/**
 * Answers that the router or the HttpApi runtime produce themselves, in plain
 * text or without a body, are rendered in the spec's `{ code, message }` shape: no such route or
 * method → 404 RESOURCE_NOT_FOUND; an unsupported content type (415), a body too
 * large (413) or any other such 4xx → 400 VALIDATION_ERROR. An unexpected failure
 * is 500 INTERNAL_ERROR whose message carries a correlation id (the request id when the host serves
 * through `RequestLog.middleware`), logged with the cause.
 */
export const layerErrorShape = HttpRouter.middleware(
  (effect) =>
    effect.pipe(
      // An unexpected failure: 500 INTERNAL_ERROR with a correlation id; the details go to the log only.
      Effect.catchDefect((cause) =>
        Effect.gen(function*() {
          // The request's id (RequestLog) when the host assigns one: the client, the log and the trace share it.
          const id = (yield* RequestLog.CurrentRequestId) ?? crypto.randomUUID()
          yield* Effect.logError("internal error", cause).pipe(Effect.annotateLogs({ correlationId: id }))
          return HttpServerResponse.jsonUnsafe(
            { code: "INTERNAL_ERROR", message: `An unexpected error occurred (correlation id ${id})` },
            { status: 500 }
          )
        })
      ),
      Effect.map((response) => {
      const contentType = response.headers["content-type"] ?? ""
      if (response.status < 400 || response.status >= 500 || contentType.includes("application/json")) return response
      if (response.status === 404 || response.status === 405) {
        return HttpServerResponse.jsonUnsafe({ code: "RESOURCE_NOT_FOUND", message: "No such resource or method" }, { status: 404 })
      }
      const message = response.status === 415
        ? "Invalid request: unsupported Content-Type; send application/json (application/gzip to publish a version)"
        : response.status === 413
        ? "Invalid request: the body is too large"
        : "Invalid request"
      return HttpServerResponse.jsonUnsafe({ code: "VALIDATION_ERROR", message }, { status: 400 })
    })
    ),
  { global: true }
)

/** Any path no route matches answers 404 RESOURCE_NOT_FOUND in the spec's shape. */
export const layerNotFound = HttpRouter.add(
  "*",
  "/*",
  HttpServerResponse.jsonUnsafe({ code: "RESOURCE_NOT_FOUND", message: "No such resource or method" }, { status: 404 })
)

/** What the routes need from the host besides an authentication. */
export type Requirements = Ports | RateLimiter.RateLimiter | HttpRouter.HttpRouter | Etag.Generator | FileSystem | HttpPlatform.HttpPlatform | Path

const routes = Layer.mergeAll(
  HttpApiBuilder.layer(AdminApi, { openapiPath: "/api/v0/openapi.json" }),
  HttpApiScalar.layer(AdminApi, { path: "/api/v0/docs" }),
  layerErrorShape,
  layerNotFound
)

/** The admin API routes (API, OpenAPI document, docs page), with the services they call. */
export const layerRoutes: Layer.Layer<never, never, Requirements | TokenVerifier> = routes.pipe(
  Layer.provide(AdminHandlers.layer),
  Layer.provide(layerServices)
)

/**
 * The admin API routes for a host that signs its users in itself: `resolve` names the caller of a
 * request from the host's own session (see `AdminHandlers.layerSessionAuthentication`), so no
 * JWT and no TokenVerifier are involved.
 */
export const layerRoutesWithSession = <R = never>(
  resolve: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Roles.Actor | undefined, never, R>
): Layer.Layer<never, never, Requirements | R> =>
  routes.pipe(
    Layer.provide(AdminHandlers.layerWithoutAuthentication.pipe(Layer.provideMerge(AdminHandlers.layerSessionAuthentication(resolve)))),
    Layer.provide(layerServices)
  )

/**
 * Registers `routes` (the admin API's, the MCP server's) under the host's `prefix`, e.g.
 * `/platform` serves `/platform/api/v0/...`; handlers see the URL without the prefix, and the
 * catch-all 404 covers only the prefix. The `{ code, message }` error shape is global middleware:
 * give modelgate a router of its own (not the one that serves the host's pages) to keep it there.
 */
export const mount = (prefix: string) =>
<A, E, R>(routes: Layer.Layer<A, E, R>): Layer.Layer<A, E, Exclude<R, HttpRouter.HttpRouter> | HttpRouter.HttpRouter> =>
  Layer.provide(routes, Layer.effect(HttpRouter.HttpRouter, Effect.map(HttpRouter.HttpRouter, (router) => router.prefixed(prefix))))
