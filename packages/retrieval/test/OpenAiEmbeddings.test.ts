/**
 * The remote embedding model against a real local HTTP server speaking OpenAI's `/embeddings`:
 * the requests it sends (bearer key, model, inputs: entities at build, phrases at search), a
 * synonym found only through the remote signal, and the fallback to offline signals (with a
 * warning) when the endpoint fails, times out or answers the wrong number of vectors.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, type Duration, Effect, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import * as OpenAiEmbeddings from "../src/OpenAiEmbeddings.ts"
import * as OpenAiServer from "./OpenAiServer.ts"

const EmbeddingsRequest = Schema.Struct({ model: Schema.String, input: Schema.Array(Schema.String), encoding_format: Schema.String })
const decodeRequest = Schema.decodeUnknownSync(EmbeddingsRequest)

/**
 * Eight dimensions: "turnover" and the sales measure share one, "airline" and the carrier name
 * another; every other entity text sits on a dimension of its own, every other phrase on the last.
 */
const vectorOf = (text: string): Array<number> => {
  const v = [0, 0, 0, 0, 0, 0, 0, 0]
  const at = text === "turnover" || text.startsWith("total_sales:") ? 0
    : text === "airline" || text.startsWith("carrier_name:") ? 1
    : text.includes(":") ? 2 + (text.length % 5)
    : 7
  v[at] = 3 // not unit length: the adapter normalizes
  return v
}

const embeddings = (request: OpenAiServer.Recorded): OpenAiServer.Reply => {
  const { input } = decodeRequest(request.body)
  // Answered out of order, as the spec allows: `index` says which input each vector belongs to.
  const data = input.map((text, index) => ({ object: "embedding", index, embedding: vectorOf(text) })).reverse()
  return { status: 200, json: { object: "list", data, model: "embed-test", usage: { prompt_tokens: input.length, total_tokens: input.length } } }
}

const remote = (url: string, timeout: Duration.Input = "5 seconds") =>
  OpenAiEmbeddings.layerOptions({ baseUrl: url, apiKey: Redacted.make("sk-test-123"), model: "embed-test", timeout }).pipe(
    Effect.provide(FetchHttpClient.layer)
  )

describe("OpenAiEmbeddings", () => {
  it.live("embeds entities at build and phrases at search; a synonym is found through the remote signal", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(embeddings)
      const options = yield* remote(server.url)
      const offline = yield* OpenAiServer.search("What was our turnover?")
      assert.deepStrictEqual(offline.sources, [], "offline, no signal links turnover to total_sales")

      const result = yield* OpenAiServer.search("What was our turnover?", options)
      const entities = result.sources.flatMap((s) => s.phrases.flatMap((p) => p.entities))
      assert.strictEqual(entities[0]?.name, "total_sales")
      assert.strictEqual(entities[0]?.match_reason, "meaning")
      assert.notInclude(entities.map((e) => e.name), "carrier_name")

      assert.strictEqual(server.requests.length, 2)
      const [build, phrases] = server.requests
      for (const r of server.requests) {
        assert.strictEqual(r.path, "/v1/embeddings")
        assert.strictEqual(r.headers.authorization, "Bearer sk-test-123")
        assert.strictEqual(decodeRequest(r.body).model, "embed-test")
        assert.strictEqual(decodeRequest(r.body).encoding_format, "float")
      }
      const built = decodeRequest(build?.body).input
      assert.include(built, "total_sales: Sum of prices paid in USD.")
      assert.include(built, "carrier_name: Marketing name of the carrier.")
      assert.strictEqual(built.length, OpenAiServer.model.entities.length)
      assert.deepStrictEqual(decodeRequest(phrases?.body).input, ["turnover"])
    }))

  it.live("splits large inputs into batches and keeps their order", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(embeddings)
      const model = yield* OpenAiEmbeddings.make({ baseUrl: `${server.url}/`, model: "embed-test", batchSize: 2 }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
      const response = yield* model.embedMany(["turnover", "airline", "x: y", "other"])
      assert.deepStrictEqual(server.requests.map((r) => decodeRequest(r.body).input), [["turnover", "airline"], ["x: y", "other"]])
      assert.deepStrictEqual(response.embeddings.map((e) => e.vector.indexOf(3)), [0, 1, 6, 7])
      assert.strictEqual(response.usage.inputTokens, 4)
      assert.isUndefined(server.requests[0]?.headers.authorization, "no key, no header")
    }))

  it.live("reads MODELGATE_EMBEDDINGS_* through Config: off without a base URL, the model required with one", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(embeddings)
      const fromEnv = (env: Record<string, string>) =>
        OpenAiEmbeddings.fromConfig.pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
      assert.deepStrictEqual(yield* fromEnv({}), {})
      assert.deepStrictEqual(yield* fromEnv({ MODELGATE_EMBEDDINGS_BASE_URL: "" }), {})
      const missing = yield* Effect.flip(fromEnv({ MODELGATE_EMBEDDINGS_BASE_URL: server.url }))
      assert.include(String(missing), "MODELGATE_EMBEDDINGS_MODEL")
      const defaults = yield* fromEnv({ MODELGATE_EMBEDDINGS_BASE_URL: server.url, MODELGATE_EMBEDDINGS_MODEL: "embed-env" })
      assert.strictEqual(defaults.embeddingModel?.floor, OpenAiEmbeddings.defaults.floor)
      assert.strictEqual(defaults.embeddingModel?.ceiling, OpenAiEmbeddings.defaults.ceiling)
      const { embeddingModel } = yield* fromEnv({
        MODELGATE_EMBEDDINGS_BASE_URL: server.url,
        MODELGATE_EMBEDDINGS_MODEL: "embed-env",
        MODELGATE_EMBEDDINGS_API_KEY: "sk-env",
        MODELGATE_EMBEDDINGS_TIMEOUT: "2 seconds",
        MODELGATE_EMBEDDINGS_FLOOR: "0.2",
        MODELGATE_EMBEDDINGS_CEILING: "0.6"
      })
      assert.strictEqual(embeddingModel?.name, "embed-env")
      assert.strictEqual(embeddingModel?.floor, 0.2)
      assert.strictEqual(embeddingModel?.ceiling, 0.6)
      const vectors = yield* (embeddingModel?.embed(["turnover"]) ?? Effect.succeed([]))
      assert.deepStrictEqual([...(vectors[0] ?? [])], [1, 0, 0, 0, 0, 0, 0, 0])
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer sk-env")
      assert.strictEqual(decodeRequest(server.requests[0]?.body).model, "embed-env")
    }))

  const fallsBack = (label: string, reply: (request: OpenAiServer.Recorded) => OpenAiServer.Reply, warning: RegExp) =>
    it.live(`${label}: the answer is the offline one and a warning is logged`, () =>
      Effect.gen(function*() {
        const server = yield* OpenAiServer.serve(reply)
        const options = yield* remote(server.url, "0.3 seconds")
        const question = "total sales of Cancelled orders"
        const offline = yield* OpenAiServer.search(question)
        assert.isAbove(offline.sources.length, 0)
        const { value, warnings } = yield* OpenAiServer.withWarnings(OpenAiServer.search(question, options))
        assert.deepStrictEqual(value, offline)
        assert.isAbove(server.requests.length, 0)
        assert.isTrue(warnings.some((w) => w.includes("embedding model embed-test failed") && warning.test(w)), warnings.join("\n"))
      }))

  fallsBack("an endpoint answering 500", () => ({ status: 500, json: { error: { message: "model overloaded" } } }), /500/)
  fallsBack("an endpoint that never answers", () => "hang", /no answer within/)
  fallsBack("an endpoint answering fewer vectors than inputs", () => ({ status: 200, json: { data: [{ index: 0, embedding: [1, 0] }] } }), /inputs, 1 embeddings/)
  fallsBack("an endpoint answering something else than embeddings", () => ({ status: 200, text: "<html>gateway</html>" }), /embeddings/)
})
