/**
 * The Publisher connection test: a GET of the remote connection itself (the
 * `connectionUri`, for example `https://host/api/v0/environments/e/connections/c`)
 * with the bearer token. Malloy Publisher answers that resource only when it is
 * up, the token is accepted and the connection exists, which its `/status` health
 * check would not prove. A non-2xx answer is the `remote` step with its status.
 */
import type { Connection, Errors } from "@modelgate/core"
import { Duration, Effect } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import { describeSocketError, failed, hostPort } from "./internal/Failure.ts"
import type { Route } from "./Route.ts"

/** What a successful Publisher test learned (Publisher names no version on this resource). */
export interface Result {
  readonly status: number
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

/** Tests Publisher settings: the remote answers the connection URI with 2xx for this token. */
export const test = (pub: Connection.PublisherConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    if (!present(pub.connectionUri)) return yield* failed("settings", "the Publisher connection URI is not set")
    let url: URL
    try {
      url = new URL(pub.connectionUri.trim())
    } catch {
      return yield* failed("settings", "the Publisher connection URI is not a valid URL")
    }
    const secure = url.protocol === "https:"
    if (!secure && url.protocol !== "http:") return yield* failed("settings", "the Publisher connection URI must be an http(s) URL")
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port)
    // Shown in messages: origin and path only (a query string could carry a credential).
    const shown = `${url.origin}${url.pathname}`
    const at = hostPort(host, port)
    const hop = yield* route.endpoint({ host, port })
    const timeoutMillis = route.options.connectTimeoutMillis

    const status = yield* Effect.callback<number, Errors.ConnectionTestFailed>((resume) => {
      const options: Https.RequestOptions = {
        host: hop.host,
        port: hop.port,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: {
          host: url.host,
          accept: "application/json",
          ...(present(pub.accessToken) ? { authorization: `Bearer ${pub.accessToken.trim()}` } : {})
        },
        // Through a tunnel the socket goes to 127.0.0.1, but TLS must name and verify the real host.
        ...(secure && Net.isIP(host) === 0 ? { servername: host } : {}),
        ...(route.proxy === undefined && route.options.lookup !== undefined ? { lookup: route.options.lookup } : {})
      }
      const request = (secure ? Https : Http).request(options, (response) => {
        response.resume()
        resume(Effect.succeed(response.statusCode ?? 0))
      })
      request.on("error", (error) => {
        const refused = hop.forwardFailure()
        resume(Effect.fail(
          route.proxy !== undefined && refused !== undefined
            ? failed("connect", `cannot reach ${at} through the SSH proxy: the bastion reported "${refused}"`)
            : failed("connect", `cannot reach ${at}: ${describeSocketError(error)}`)
        ))
      })
      request.end()
      return Effect.sync(() => request.destroy())
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMillis),
        orElse: () => Effect.fail(failed("connect", `no answer from ${at} within ${timeoutMillis} ms`))
      })
    )
    if (status < 200 || status > 299) {
      const hint = status === 401 || status === 403
        ? " (the access token was not accepted)"
        : status === 404
        ? " (no such connection on the remote)"
        : ""
      return yield* failed("remote", `${shown} answered HTTP ${status}${hint}`)
    }
    return { status }
  }))
