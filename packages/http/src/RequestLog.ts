/**
 * Per-request observability for a host's HTTP server: a request id (the caller's well-formed
 * `X-Request-Id`, else a fresh one) echoed in the response, carried by every log line and span of
 * the request and by the INTERNAL_ERROR correlation id; one log line per request; and request
 * metrics. Apply `middleware` to the whole handler the server serves.
 */
import { Context, Effect, Exit, Metric } from "effect"
import { HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"

/** The id of the request being served; `undefined` outside a request (or without the middleware). */
export class CurrentRequestId extends Context.Reference<string | undefined>("@modelgate/http/CurrentRequestId", {
  defaultValue: () => undefined
}) {}

/** The request header that carries the id, in and out. */
export const header = "x-request-id"

/** The span attribute and log annotation that carry the id. */
export const attribute = "request.id"

// An id a caller sends is kept only when it is short and plain: it is written to logs and echoed.
const wellFormed = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

/** The caller's `X-Request-Id` when well-formed, else `undefined`. */
export const fromHeader = (value: string | undefined): string | undefined =>
  value !== undefined && wellFormed.test(value) ? value : undefined

/** Requests served, by method, route class and status. */
export const requests = Metric.counter("http.server.requests", { description: "HTTP requests served" })

/** Request duration in milliseconds. */
export const duration = Metric.histogram("http.server.request.duration", {
  description: "HTTP request duration (ms)",
  boundaries: Metric.boundariesFromIterable([5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000])
})

/**
 * Wraps the server's handler: assigns the request id, echoes it in `X-Request-Id`, annotates the
 * request's logs and spans with it, logs one line (method, path without the query string, status,
 * duration, id) unless `log` is false, and counts the request. A failure the handler did not render
 * becomes its usual response here (a client that went away: 499), so the line and the header are
 * there for it too.
 */
export const middleware = (options: { readonly log?: boolean | undefined } = {}) =>
<E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const id = fromHeader(request.headers[header]) ?? crypto.randomUUID()
    // The path only: a query string may carry what must not be logged.
    const path = request.url.split("?", 1)[0] ?? "/"
    const started = performance.now()
    yield* Effect.annotateCurrentSpan(attribute, id)
    const exit = yield* app.pipe(
      Effect.provideService(CurrentRequestId, id),
      Effect.annotateSpans(attribute, id),
      Effect.annotateLogs(attribute, id),
      Effect.exit
    )
    const response = Exit.isSuccess(exit) ? exit.value : (yield* HttpServerError.causeResponse(exit.cause))[0]
    const millis = performance.now() - started
    const attributes = { "http.request.method": request.method, "http.response.status_code": String(response.status) }
    yield* Metric.update(Metric.withAttributes(requests, attributes), 1)
    yield* Metric.update(Metric.withAttributes(duration, attributes), millis)
    if (options.log !== false) {
      yield* Effect.logInfo("request").pipe(
        Effect.annotateLogs({
          [attribute]: id,
          "http.method": request.method,
          "http.path": path,
          "http.status": response.status,
          "duration.ms": Math.round(millis * 10) / 10
        })
      )
    }
    return HttpServerResponse.setHeader(response, header, id)
  })
