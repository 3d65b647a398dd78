/**
 * A typed client of the admin API, derived from the `AdminApi` definition: every endpoint is a
 * method (`client.connections.list({ params })`) whose failures are the API's `{ code, message }`
 * error classes. It runs over any `HttpClient` (`FetchHttpClient.layer` in Node, browsers and
 * workers), so a host application talks to modelgate without hand-written requests.
 */
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { AdminApi } from "./AdminApi.ts"

/** The client: one method per endpoint, grouped as the definition groups them. */
export type AdminClient = HttpApiClient.ForApi<typeof AdminApi>

/** Where the admin API is and who calls it. */
export interface Options {
  /**
   * Where the admin API is served: the spec's base URL (`https://acme.admin.example.com/api/v0`) or,
   * without `/api/v0`, the origin plus the prefix a host mounts it under (`https://example.com/platform`).
   */
  readonly baseUrl: string | URL
  /** A bearer token (the admin API's JWT); absent: no Authorization header. */
  readonly token?: string | Redacted.Redacted<string> | undefined
  /** Headers sent with every request, e.g. the session cookie of a host that resolves callers itself. */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** The definition's paths start with `/api/v0`: a base URL that names it already loses it once. */
const apiRoot = (baseUrl: string | URL): string => {
  const url = (typeof baseUrl === "string" ? baseUrl : baseUrl.href).replace(/\/+$/, "")
  return url.endsWith("/api/v0") ? url.slice(0, -"/api/v0".length) : url
}

/** A client of the admin API at `baseUrl` over the `HttpClient` in context. */
export const make = (options: Options): Effect.Effect<AdminClient, never, HttpClient.HttpClient> => {
  const token = options.token
  const headers = options.headers
  return HttpApiClient.make(AdminApi, {
    baseUrl: apiRoot(options.baseUrl),
    transformClient: HttpClient.mapRequest((request) => {
      const withHeaders = headers === undefined ? request : HttpClientRequest.setHeaders(request, headers)
      return token === undefined ? withHeaders : HttpClientRequest.bearerToken(withHeaders, token)
    })
  })
}
