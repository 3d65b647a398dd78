/**
 * A remote sentence-embedding model for `get_context`'s second meaning signal: an effect/ai
 * `EmbeddingModel` over an OpenAI-compatible `POST {baseUrl}/embeddings` (through effect's
 * `HttpClient`), adapted to `Semantic.EmbeddingModel`. Entities are embedded at index build,
 * phrases at search; when the endpoint fails or is slow a warning is logged and retrieval keeps
 * to its offline signals, so `get_context` never fails because the remote is down.
 */
import { Config, Duration, Effect, Option, Redacted, Schema } from "effect"
import { AiError, EmbeddingModel } from "effect/ai"
import { HttpClient } from "effect/http"
import * as OpenAiHttp from "./internal/openAiHttp.ts"
import type * as Retrieval from "./Retrieval.ts"
import * as Semantic from "./Semantic.ts"

/** How to reach the model. */
export interface Options {
  /** Up to the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** The `model` of the request, e.g. `text-embedding-3-small`. */
  readonly model: string
  /** Per request (default `defaults.timeout`). */
  readonly timeout?: Duration.Input | undefined
  /** Texts per request (default `defaults.batchSize`); an index build sends one request per batch. */
  readonly batchSize?: number | undefined
  /** Cosine at or below which a phrase and an entity are unrelated (default `defaults.floor`). */
  readonly floor?: number | undefined
  /** Cosine at or above which they mean the same (default `defaults.ceiling`). */
  readonly ceiling?: number | undefined
}

/**
 * Defaults. The calibration is a starting point for OpenAI's `text-embedding-3-*` models, whose
 * cosines between short texts run lower than word vectors' (unrelated texts well above 0); it
 * was not measured here (no remote model in the tests or the eval). Check it on the model in use
 * with `npm run eval:context` and set `MODELGATE_EMBEDDINGS_FLOOR`/`_CEILING`.
 */
export const defaults = { timeout: Duration.seconds(10), batchSize: 256, floor: 0.3, ceiling: 0.7 } as const

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({ index: Schema.optionalKey(Schema.Int), embedding: Schema.Array(Schema.Finite) })),
  usage: Schema.optionalKey(Schema.Struct({ prompt_tokens: Schema.optionalKey(Schema.Number) }))
})

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The effect/ai `EmbeddingModel` over the endpoint: one request per batch, vectors in input order. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const client = yield* HttpClient.HttpClient
  const endpoint: OpenAiHttp.Endpoint = { baseUrl: options.baseUrl, apiKey: options.apiKey, timeout: options.timeout ?? defaults.timeout }
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? defaults.batchSize))
  const call = { module: "OpenAiEmbeddings", method: "embedMany", path: "/embeddings" } as const
  const embedBatch = (input: ReadonlyArray<string>) =>
    OpenAiHttp.postJson(client, endpoint, call, { model: options.model, input, encoding_format: "float" }, EmbeddingsResponse).pipe(
      Effect.flatMap((response) => {
        // The spec orders `data` by `index`; some compatible servers omit it and keep input order.
        const data = response.data.map((d, i) => ({ index: d.index ?? i, embedding: d.embedding }))
        data.sort((x, y) => x.index - y.index)
        return data.length === input.length && data.every((d, i) => d.index === i)
          ? Effect.succeed({ vectors: data.map((d) => [...d.embedding]), tokens: response.usage?.prompt_tokens })
          : Effect.fail(AiError.make({
            ...call,
            reason: new AiError.InvalidOutputError({ description: `${input.length} inputs, ${data.length} embeddings` })
          }))
      })
    )
  return yield* EmbeddingModel.make({
    embedMany: ({ inputs }) =>
      Effect.forEach(chunks(inputs, batchSize), embedBatch).pipe(
        Effect.map((batches) => ({
          results: batches.flatMap((b) => b.vectors),
          usage: { inputTokens: batches.every((b) => b.tokens !== undefined) ? batches.reduce((sum, b) => sum + (b.tokens ?? 0), 0) : undefined }
        }))
      )
  })
})

/** A vector scaled to unit length (the scoring compares by dot product); zero stays zero. */
const unit = (vector: ReadonlyArray<number>): Float32Array => {
  const out = Float32Array.from(vector)
  const norm = Math.sqrt(Semantic.dot(out, out))
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / norm
  return out
}

/**
 * An effect/ai `EmbeddingModel` as the retrieval's `Semantic.EmbeddingModel`: unit vectors, and a
 * failure logged as a warning before it fails (the service then scores without this signal).
 */
export const toSemantic = (
  model: EmbeddingModel.EmbeddingModel,
  calibration: { readonly name: string; readonly floor: number; readonly ceiling: number }
): Semantic.EmbeddingModel => ({
  ...calibration,
  embed: (texts) =>
    texts.length === 0 ? Effect.succeed([]) : model.embedMany(texts).pipe(
      Effect.map((response) => response.embeddings.map((e) => unit(e.vector))),
      Effect.tapError((e) =>
        Effect.logWarning(`get_context: embedding model ${calibration.name} failed, offline signals only: ${e.message}`)
      ),
      Effect.mapError((e) => new Semantic.EmbeddingFailed({ message: e.message }))
    )
})

/** The retrieval's embedding model over the endpoint. */
export const layerOptions = (options: Options): Effect.Effect<Pick<Retrieval.Options, "embeddingModel">, never, HttpClient.HttpClient> =>
  Effect.map(make(options), (model) => ({
    embeddingModel: toSemantic(model, {
      name: options.model,
      floor: options.floor ?? defaults.floor,
      ceiling: options.ceiling ?? defaults.ceiling
    })
  }))

/**
 * The retrieval's embedding model from the environment: off (no member) unless
 * `MODELGATE_EMBEDDINGS_BASE_URL` is set and not blank; then `MODELGATE_EMBEDDINGS_MODEL` is
 * required, and `MODELGATE_EMBEDDINGS_API_KEY`, `MODELGATE_EMBEDDINGS_TIMEOUT` (e.g. `10 seconds`),
 * `MODELGATE_EMBEDDINGS_FLOOR` and `MODELGATE_EMBEDDINGS_CEILING` are optional.
 */
export const fromConfig: Effect.Effect<Pick<Retrieval.Options, "embeddingModel">, Config.ConfigError, HttpClient.HttpClient> = Effect.gen(
  function*() {
    const baseUrl = Option.filter(yield* Config.option(Config.String("MODELGATE_EMBEDDINGS_BASE_URL")), (s) => s.trim() !== "")
    if (Option.isNone(baseUrl)) return {}
    const apiKey = Option.filter(yield* Config.option(Config.Redacted("MODELGATE_EMBEDDINGS_API_KEY")), (k) => Redacted.value(k) !== "")
    return yield* layerOptions({
      baseUrl: baseUrl.value.trim(),
      apiKey: Option.getOrUndefined(apiKey),
      model: yield* Config.NonEmptyString("MODELGATE_EMBEDDINGS_MODEL"),
      timeout: yield* Config.Duration("MODELGATE_EMBEDDINGS_TIMEOUT").pipe(Config.withDefault(defaults.timeout)),
      floor: yield* Config.Number("MODELGATE_EMBEDDINGS_FLOOR").pipe(Config.withDefault(defaults.floor)),
      ceiling: yield* Config.Number("MODELGATE_EMBEDDINGS_CEILING").pipe(Config.withDefault(defaults.ceiling))
    })
  }
)
