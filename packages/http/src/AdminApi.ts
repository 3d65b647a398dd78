/**
 * The admin REST API v0 as an HttpApi definition: endpoints, path, query and body
 * schemas (core's), responses and errors. No handlers and no database code, so a
 * host application can build a typed client from it or serve it with its own
 * handlers; `AdminHandlers` implements it over core's services.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"
import { ApiKeyService, Connection, Hierarchy, Naming, PackagePermission, PackageVersion } from "@modelgate/core"
import * as AdminErrors from "./AdminErrors.ts"
import { Authentication } from "./Authentication.ts"

/** Turns request decoding failures into 400 VALIDATION_ERROR bodies naming the field. */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("@modelgate/http/RequestErrors", {
  error: AdminErrors.BadRequest
}) {}

/** Applies the per-caller, per-route rate limit: 429 RATE_LIMIT_EXCEEDED with Retry-After. */
export class RateLimit extends HttpApiMiddleware.Service<RateLimit>()("@modelgate/http/RateLimit", {
  error: AdminErrors.TooManyRequests
}) {}

const errors = AdminErrors.all

const environmentParams = { organizationName: Naming.Identifier, environmentName: Naming.Identifier }
const connectionParams = { ...environmentParams, connectionName: Naming.Identifier }
const packageParams = { ...environmentParams, packageName: Naming.Identifier }
const versionParams = { ...packageParams, versionId: Naming.VersionIdPath }
const flag = Schema.optional(Schema.Literals(["true", "false"]))

/** The package resource. */
export const PackageResource = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  autoPromote: Schema.Boolean,
  archiveDemotedAfterSeconds: Schema.NullOr(Schema.Int),
  latestVersionId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateTimeUtcFromString,
  updatedAt: Schema.DateTimeUtcFromString
}).annotate({ identifier: "Package" })

/** The body of create package. */
export const NewPackage = Schema.Struct({
  name: Naming.Identifier,
  description: Schema.optionalKey(Schema.String),
  autoPromote: Schema.optionalKey(Schema.Boolean),
  archiveDemotedAfterSeconds: Schema.optionalKey(Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))))
}).annotate({ identifier: "NewPackage" })

/** The package resource of a stored package. */
export const packageResource = (p: Hierarchy.Package): typeof PackageResource.Type => ({
  name: p.name,
  ...(p.description === undefined ? {} : { description: p.description }),
  autoPromote: p.autoPromote,
  archiveDemotedAfterSeconds: p.archiveDemotedAfterSeconds,
  latestVersionId: p.latestVersionId,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt
})

/** Connections of an environment. */
export class ConnectionsGroup extends HttpApiGroup.make("connections")
  .add(
    HttpApiEndpoint.get("list", "/connections", { params: environmentParams, success: Schema.Array(Connection.Connection), error: errors }),
    HttpApiEndpoint.post("create", "/connections", {
      params: environmentParams,
      payload: Connection.ConnectionInput,
      success: Connection.Connection.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/connections/:connectionName", { params: connectionParams, success: Connection.Connection, error: errors }),
    HttpApiEndpoint.patch("update", "/connections/:connectionName", {
      params: connectionParams,
      payload: Connection.ConnectionInput,
      success: Connection.Connection,
      error: errors
    }),
    HttpApiEndpoint.delete("remove", "/connections/:connectionName", { params: connectionParams, success: HttpApiSchema.NoContent, error: errors })
  )
  .prefix("/organizations/:organizationName/environments/:environmentName")
  .annotateMerge(OpenApi.annotations({ title: "Connections", description: "Database connections of an environment" }))
{}

/** Packages of an environment. */
export class PackagesGroup extends HttpApiGroup.make("packages")
  .add(
    HttpApiEndpoint.get("list", "/packages", { params: environmentParams, success: Schema.Array(PackageResource), error: errors }),
    HttpApiEndpoint.post("create", "/packages", {
      params: environmentParams,
      payload: NewPackage,
      success: PackageResource.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/packages/:packageName", { params: packageParams, success: PackageResource, error: errors })
  )
  .prefix("/organizations/:organizationName/environments/:environmentName")
  .annotateMerge(OpenApi.annotations({ title: "Packages", description: "Packages of an environment" }))
{}

/** Versions of a package. */
export class VersionsGroup extends HttpApiGroup.make("versions")
  .add(
    HttpApiEndpoint.get("list", "/packages/:packageName/versions", {
      params: packageParams,
      success: Schema.Array(PackageVersion.PackageVersion),
      error: errors
    }),
    HttpApiEndpoint.post("publish", "/packages/:packageName/versions", {
      params: packageParams,
      query: { id: Naming.SemanticVersion },
      payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/gzip" })),
      success: PackageVersion.PackageVersion.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/packages/:packageName/versions/:versionId", {
      params: versionParams,
      success: PackageVersion.PackageVersion,
      error: errors
    }),
    HttpApiEndpoint.patch("update", "/packages/:packageName/versions/:versionId", {
      params: versionParams,
      payload: PackageVersion.VersionPatch,
      success: PackageVersion.PackageVersion,
      error: errors
    }),
    HttpApiEndpoint.post("promote", "/packages/:packageName/versions/:versionId/promote", {
      params: versionParams,
      success: PackageVersion.PackageVersion,
      error: errors
    })
  )
  .prefix("/organizations/:organizationName/environments/:environmentName")
  .annotateMerge(OpenApi.annotations({ title: "Package versions", description: "Publish, archive, unarchive and promote versions" }))
{}

/** Permissions of a package. */
export class PermissionsGroup extends HttpApiGroup.make("permissions")
  .add(
    HttpApiEndpoint.get("list", "/packages/:packageName/permissions", {
      params: packageParams,
      success: Schema.Array(PackagePermission.PackagePermission),
      error: errors
    }),
    HttpApiEndpoint.post("create", "/packages/:packageName/permissions", {
      params: packageParams,
      query: { requestPermission: flag, notifyPeople: flag },
      payload: PackagePermission.PackagePermissionInput,
      success: PackagePermission.PackagePermission.pipe(HttpApiSchema.status(201)),
      error: errors
    })
  )
  .prefix("/organizations/:organizationName/environments/:environmentName")
  .annotateMerge(OpenApi.annotations({ title: "Package permissions", description: "Grants and access requests on a package" }))
{}

/** The caller's own API keys for the MCP server. */
export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("list", "/users/me/api-keys", { success: Schema.Array(ApiKeyService.ApiKeyView), error: errors }),
    HttpApiEndpoint.post("create", "/users/me/api-keys", {
      payload: Schema.Struct({ name: Schema.String }),
      success: ApiKeyService.CreatedApiKey.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.delete("revoke", "/users/me/api-keys/:keyId", {
      params: { keyId: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]+$/)) },
      success: ApiKeyService.ApiKeyView,
      error: errors
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "API keys", description: "The caller's API keys for the MCP server; a key is shown once, at creation" }))
{}

/** The admin REST API v0. */
export class AdminApi extends HttpApi.make("modelgate-admin")
  .add(ConnectionsGroup)
  .add(PackagesGroup)
  .add(VersionsGroup)
  .add(PermissionsGroup)
  .add(ApiKeysGroup)
  // Listed innermost first: requests pass RequestErrors, then Authentication
  // (so RateLimit counts per authenticated caller), then RateLimit.
  .middleware(RateLimit)
  .middleware(Authentication)
  .middleware(RequestErrors)
  .prefix("/api/v0")
  // Unknown and mistyped fields are errors, and every problem is reported at once.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "modelgate admin API",
    version: "v0",
    description: "Organizations, environments, packages, versions, connections and permissions of a Malloy semantic-model platform."
  }))
{}
