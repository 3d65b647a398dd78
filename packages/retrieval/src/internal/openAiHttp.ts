/**
 * One JSON call to an OpenAI-compatible endpoint (OpenAI, Azure's v1 route, vLLM, Ollama,
 * llama.cpp, LiteLLM...): `POST {baseUrl}{path}` with an optional bearer key, a time limit, the
 * body decoded with a schema, and every failure (transport, status, timeout, shape) as an
 * effect/ai `AiError`. Shared by the embedding and the phrase adapters.
 */
import { Duration, Effect, Redacted, Schema } from "effect"
import { AiError } from "effect/ai"
import { HttpClient, HttpClientRequest, HttpIncomingMessage } from "effect/http"

/** Where and how to call the endpoint. */
export interface Endpoint {
  /** Up to the version segment, e.g. `https://api.openai.com/v1`; a trailing slash is ignored. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer <key>`; local servers often need none. */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly timeout: Duration.Input
}

/** The URL of `path` under the endpoint's base URL. */
export const urlOf = (endpoint: Endpoint, path: string): string => `${endpoint.baseUrl.replace(/\/+$/, "")}${path}`

/** A response body, shortened for an error description. */
const excerpt = (body: string) => (body.length > 300 ? `${body.slice(0, 300)}…` : body)

/** POSTs `body` as JSON and decodes the 2xx JSON answer with `schema`. */
export const postJson = <S extends Schema.Constraint>(
  client: HttpClient.HttpClient,
  endpoint: Endpoint,
  call: { readonly module: string; readonly method: string; readonly path: string },
  body: unknown,
  schema: S
): Effect.Effect<S["Type"], AiError.AiError, S["DecodingServices"]> => {
  const url = urlOf(endpoint, call.path)
  const fail = (reason: AiError.AiErrorReason) => AiError.make({ module: call.module, method: call.method, reason })
  const base = HttpClientRequest.post(url).pipe(HttpClientRequest.acceptJson, HttpClientRequest.bodyJsonUnsafe(body))
  const request = endpoint.apiKey === undefined ? base : HttpClientRequest.bearerToken(base, endpoint.apiKey)
  return client.execute(request).pipe(
    Effect.mapError((e) =>
      fail(new AiError.NetworkError({ reason: "TransportError", method: "POST", url, description: e.message }))
    ),
    Effect.flatMap((response) =>
      response.status >= 200 && response.status < 300
        ? HttpIncomingMessage.schemaBodyJson(schema)(response).pipe(
          Effect.mapError((e) => fail(new AiError.InvalidResponseError({ description: `${url}: ${e.message}` })))
        )
        : response.text.pipe(
          Effect.orElseSucceed(() => ""),
          Effect.flatMap((text) =>
            Effect.fail(fail(AiError.reasonFromHttpStatus({ status: response.status, body: text, description: `${url} answered ${response.status}: ${excerpt(text)}` })))
          )
        )
    ),
    Effect.timeoutOrElse({
      duration: endpoint.timeout,
      orElse: () =>
        Effect.fail(fail(new AiError.NetworkError({
          reason: "TransportError",
          method: "POST",
          url,
          description: `no answer within ${Duration.format(Duration.fromInputUnsafe(endpoint.timeout))}`
        })))
    })
  )
}
