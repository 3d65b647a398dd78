/**
 * @modelgate/http: the admin REST API v0. `AdminApi` is the definition (for
 * clients and OpenAPI); `AdminHandlers` serves it over core's services.
 */
export * as AdminApi from "./AdminApi.ts"
export * as AdminClient from "./AdminClient.ts"
export * as AdminErrors from "./AdminErrors.ts"
export * as Authentication from "./Authentication.ts"
export * as AdminHandlers from "./AdminHandlers.ts"
export * as AdminServer from "./AdminServer.ts"
export * as PackageFiles from "./PackageFiles.ts"
export * as RequestLog from "./RequestLog.ts"
export * as TokenVerifier from "./TokenVerifier.ts"
