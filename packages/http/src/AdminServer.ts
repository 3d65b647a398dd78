/**
 * The admin API as routes a host application mounts: the HttpApi served by the
 * handlers, its OpenAPI 3.1 document at `/api/v0/openapi.json`, a docs page at
 * `/api/v0/docs`, and core's services composed over whatever ports the host
 * provides (storage, connection tester, notifier, token verifier, rate limiter).
 */
import { Effect, Layer } from "effect"
import { type Etag, type HttpPlatform, HttpRouter, HttpServerResponse } from "effect/http"
import type { FileSystem } from "effect/FileSystem"
import type { Path } from "effect/Path"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import {
  Access,
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
  type UserRepo,
  type VersionRepo
} from "@modelgate/core"
import type { RateLimiter } from "./RateLimiter.ts"
import type { TokenVerifier } from "./TokenVerifier.ts"
import { AdminApi } from "./AdminApi.ts"
import * as AdminHandlers from "./AdminHandlers.ts"

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
export type Services = ConnectionService.ConnectionService | PackageService.PackageService | PermissionService.PermissionService | Access.Access

/** Core's admin services over the ports. */
export const layerServices: Layer.Layer<Services, never, Ports> = Layer.mergeAll(
  ConnectionService.ConnectionService.layer,
  PackageService.PackageService.layer,
  PermissionService.PermissionService.layer
).pipe(Layer.provideMerge(Access.Access.layer))

/**
 * Answers that the HttpApi runtime produces itself in the spec's error shape: an
 * unsupported content type (415 there) and an unknown route are rendered as
 * `{ code, message }` (400 VALIDATION_ERROR and 404 RESOURCE_NOT_FOUND).
 */
export const layerErrorShape = HttpRouter.middleware(
  (effect) =>
    Effect.map(effect, (response) => {
      // The router's own "no such route": an empty 404.
      if (response.status === 404 && response.headers["content-type"] === undefined) {
        return HttpServerResponse.jsonUnsafe({ code: "RESOURCE_NOT_FOUND", message: "No such resource" }, { status: 404 })
      }
      if (response.status === 415) {
        return HttpServerResponse.jsonUnsafe(
          { code: "VALIDATION_ERROR", message: "Invalid request: unsupported Content-Type; send application/json (application/gzip to publish a version)" },
          { status: 400 }
        )
      }
      return response
    }),
  { global: true }
)

/** The admin API routes (API, OpenAPI document, docs page), with the services they call. */
export const layerRoutes: Layer.Layer<
  never,
  never,
  Ports | TokenVerifier | RateLimiter | HttpRouter.HttpRouter | Etag.Generator | FileSystem | HttpPlatform.HttpPlatform | Path
> = Layer.mergeAll(
  HttpApiBuilder.layer(AdminApi, { openapiPath: "/api/v0/openapi.json" }).pipe(Layer.provide(AdminHandlers.layer)),
  HttpApiScalar.layer(AdminApi, { path: "/api/v0/docs" }),
  layerErrorShape
).pipe(Layer.provide(layerServices))
