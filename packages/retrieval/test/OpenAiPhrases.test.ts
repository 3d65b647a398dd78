/**
 * Phrase extraction by a language model against a real local HTTP server speaking OpenAI's
 * `/chat/completions`: the request (bearer key, model, instructions and question, strict JSON
 * schema response format), the phrases aligned with the question and used by the search, and the
 * fallback to offline extraction (with a warning) when the endpoint fails, times out or answers
 * something that is not the phrases object.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, type Duration, Effect, Redacted, Schema, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import * as OpenAiChat from "../src/OpenAiChat.ts"
import * as OpenAiPhrases from "../src/OpenAiPhrases.ts"
import * as OpenAiServer from "./OpenAiServer.ts"

const ChatRequest = Schema.Struct({
  model: Schema.String,
  temperature: Schema.Number,
  messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String })),
  response_format: Schema.optionalKey(Schema.Struct({
    type: Schema.String,
    json_schema: Schema.Struct({ name: Schema.String, strict: Schema.Boolean, schema: Schema.Record(Schema.String, Schema.Unknown) })
  }))
})
const decodeRequest = Schema.decodeUnknownSync(ChatRequest)

const completion = (content: string | null, finish = "stop"): OpenAiServer.Reply => ({
  status: 200,
  json: {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "chat-test",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
    usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 }
  }
})

const question = "turnover per shipping carrier in 2024"

/** What a model would answer for `question`, with one phrase that is not in it. */
const answer = JSON.stringify({
  phrases: [
    { text: "per shipping carrier", kind: "group_by", description: "break down by the delivery company" },
    { text: "Turnover", kind: "entity", description: "money taken in" },
    { text: "2024", kind: "time", description: "the calendar year 2024" },
    { text: "gross merchandise value", kind: "entity", description: "not in the question" }
  ]
})

const remote = (url: string, timeout: Duration.Input = "5 seconds") =>
  OpenAiPhrases.layerOptions({ baseUrl: url, apiKey: Redacted.make("sk-chat-456"), model: "chat-test", timeout }).pipe(
    Effect.provide(FetchHttpClient.layer)
  )

describe("OpenAiPhrases", () => {
  it.live("sends the question with a strict JSON schema and searches the model's phrases", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(() => completion(answer))
      const options = yield* remote(server.url)
      const result = yield* OpenAiServer.search(question, options)

      assert.deepStrictEqual(result.phrases, [
        { text: "turnover", kind: "entity", description: "money taken in" },
        { text: "per shipping carrier", kind: "group_by", description: "break down by the delivery company" },
        { text: "2024", kind: "time", description: "the calendar year 2024" }
      ])
      const carriers = result.sources.find((s) => s.source_name === "carriers")
      assert.strictEqual(carriers?.phrases[0]?.phrase, "per shipping carrier")
      assert.strictEqual(carriers?.phrases[0]?.phrase_description, "break down by the delivery company")
      assert.strictEqual(carriers?.phrases[0]?.entities[0]?.name, "carrier_name")

      assert.strictEqual(server.requests.length, 1)
      const [request] = server.requests
      assert.strictEqual(request?.path, "/v1/chat/completions")
      assert.strictEqual(request?.headers.authorization, "Bearer sk-chat-456")
      const body = decodeRequest(request?.body)
      assert.strictEqual(body.model, "chat-test")
      assert.strictEqual(body.temperature, 0)
      assert.deepStrictEqual(body.messages, [
        { role: "system", content: OpenAiPhrases.instructions },
        { role: "user", content: question }
      ])
      assert.strictEqual(body.response_format?.type, "json_schema")
      assert.strictEqual(body.response_format?.json_schema.name, "phrases")
      assert.isTrue(body.response_format?.json_schema.strict)
      assert.strictEqual(body.response_format?.json_schema.schema["type"], "object")
      assert.deepStrictEqual(body.response_format?.json_schema.schema["required"], ["phrases"])
    }))

  it("aligns the model's phrases with the question: its spelling, once each, in question order", () => {
    const phrases = OpenAiPhrases.align("Sales of JFK flights by Carrier", {
      phrases: [
        { text: " carrier ", kind: "group_by", description: "" },
        { text: "sales", kind: "entity", description: "amount sold" },
        { text: "SALES", kind: "entity", description: "again" },
        { text: "jfk", kind: "filter", description: "airport code" },
        { text: "revenue", kind: "entity", description: "not there" }
      ]
    })
    assert.deepStrictEqual(phrases, [
      { text: "Sales", kind: "entity", description: "amount sold" },
      { text: "JFK", kind: "filter", description: "airport code" },
      { text: "Carrier", kind: "group_by", description: "group_by" }
    ])
  })

  it.live("OpenAiChat answers plain text through LanguageModel.generateText and streamText", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(() => completion("Hello there", "length"))
      const model = yield* OpenAiChat.make({ baseUrl: server.url, model: "chat-test", temperature: 0.5 }).pipe(Effect.provide(FetchHttpClient.layer))
      const response = yield* model.generateText({ prompt: "Say hello" })
      assert.strictEqual(response.text, "Hello there")
      assert.strictEqual(response.finishReason, "length")
      assert.strictEqual(response.usage.inputTokens.total, 120)
      const body = decodeRequest(server.requests[0]?.body)
      assert.deepStrictEqual(body.messages, [{ role: "user", content: "Say hello" }])
      assert.strictEqual(body.temperature, 0.5)
      assert.isUndefined(body.response_format)
      assert.isUndefined(server.requests[0]?.headers.authorization)
      const parts = yield* Stream.runCollect(
        LanguageModel.streamText({ prompt: "Say hello" }).pipe(Stream.provideService(LanguageModel.LanguageModel, model))
      )
      assert.strictEqual(parts.flatMap((p) => p.type === "text-delta" ? [p.delta] : []).join(""), "Hello there")
      assert.strictEqual(parts.find((p) => p.type === "finish")?.type, "finish")
      assert.strictEqual(server.requests.length, 2)
    }))

  it.live("reads MODELGATE_LLM_* through Config: off without a base URL, the model required with one", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.serve(() => completion(answer))
      const fromEnv = (env: Record<string, string>) =>
        OpenAiPhrases.fromConfig.pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
      assert.deepStrictEqual(yield* fromEnv({}), {})
      assert.deepStrictEqual(yield* fromEnv({ MODELGATE_LLM_BASE_URL: " " }), {})
      const missing = yield* Effect.flip(fromEnv({ MODELGATE_LLM_BASE_URL: server.url }))
      assert.include(String(missing), "MODELGATE_LLM_MODEL")
      const options = yield* fromEnv({
        MODELGATE_LLM_BASE_URL: server.url,
        MODELGATE_LLM_MODEL: "chat-env",
        MODELGATE_LLM_API_KEY: "sk-env",
        MODELGATE_LLM_TIMEOUT: "2 seconds"
      })
      const result = yield* OpenAiServer.search(question, options)
      assert.strictEqual(result.phrases[0]?.description, "money taken in")
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer sk-env")
      assert.strictEqual(decodeRequest(server.requests[0]?.body).model, "chat-env")
    }))

  const fallsBack = (label: string, reply: () => OpenAiServer.Reply, warning: RegExp) =>
    it.live(`${label}: offline extraction is used and a warning is logged`, () =>
      Effect.gen(function*() {
        const server = yield* OpenAiServer.serve(reply)
        const options = yield* remote(server.url, "0.3 seconds")
        const offline = yield* OpenAiServer.search(question)
        const { value, warnings } = yield* OpenAiServer.withWarnings(OpenAiServer.search(question, options))
        assert.deepStrictEqual(value, offline)
        assert.strictEqual(server.requests.length, 1)
        assert.isTrue(warnings.some((w) => w.includes("phrase model chat-test failed") && warning.test(w)), warnings.join("\n"))
      }))

  fallsBack("an endpoint answering 503", () => ({ status: 503, json: { error: { message: "unavailable" } } }), /503/)
  fallsBack("an endpoint answering 401", () => ({ status: 401, json: { error: { message: "bad key" } } }), /401/)
  fallsBack("an endpoint that never answers", () => "hang", /no answer within/)
  fallsBack("prose instead of the JSON object", () => completion("Sure! The phrases are turnover and carrier."), /Expected a valid JSON string/)
  fallsBack("an empty completion", () => completion(null), /No text content/)
  fallsBack(
    "phrases none of which is in the question",
    () => completion(JSON.stringify({ phrases: [{ text: "gross merchandise value", kind: "entity", description: "x" }] })),
    /none of the phrases/
  )
})
