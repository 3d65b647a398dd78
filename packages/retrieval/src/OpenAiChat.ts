/**
 * An effect/ai `LanguageModel` over an OpenAI-compatible `POST {baseUrl}/chat/completions`
 * (through effect's `HttpClient`), enough for what retrieval asks of a language model: text and
 * structured objects (`generateObject`, sent as a strict `json_schema` response format) from
 * system, user and assistant text. Tools and files are refused; `streamText` answers the whole
 * completion as one delta. `OpenAiPhrases` uses it to extract phrases.
 */
import { Duration, Effect, type Redacted, Schema, Stream } from "effect"
import { AiError, LanguageModel, OpenAiStructuredOutput, type Prompt, type Response } from "effect/ai"
import { HttpClient } from "effect/http"
import * as OpenAiHttp from "./internal/openAiHttp.ts"

/** How to reach the model. */
export interface Options {
  /** Up to the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** The `model` of the request, e.g. `gpt-4.1-mini`. */
  readonly model: string
  /** Per request (default 5 seconds: phrase extraction sits on the path of every search). */
  readonly timeout?: Duration.Input | undefined
  /** Sampling temperature (default 0: the same question gives the same phrases). */
  readonly temperature?: number | undefined
}

/** The default time limit of a completion. */
export const defaultTimeout = Duration.seconds(5)

const ChatResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String),
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({ content: Schema.optionalKey(Schema.NullOr(Schema.String)) }),
    finish_reason: Schema.optionalKey(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optionalKey(Schema.Struct({
    prompt_tokens: Schema.optionalKey(Schema.Int),
    completion_tokens: Schema.optionalKey(Schema.Int),
    total_tokens: Schema.optionalKey(Schema.Int)
  }))
})

type ChatMessage = { readonly role: "system" | "user" | "assistant"; readonly content: string }

const finishReasons: Readonly<Record<string, Response.FinishReason>> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  tool_calls: "tool-calls",
  function_call: "tool-calls"
}

const unsupported = (method: string, description: string) =>
  AiError.make({ module: "OpenAiChat", method, reason: new AiError.InvalidUserInputError({ description }) })

/** The prompt as chat messages: text only (files, tool calls and tool results are refused). */
const messagesOf = (prompt: Prompt.Prompt, method: string): Effect.Effect<Array<ChatMessage>, AiError.AiError> =>
  Effect.forEach(prompt.content, (message): Effect.Effect<ChatMessage, AiError.AiError> => {
    if (message.role === "system") return Effect.succeed({ role: "system", content: message.content })
    if (message.role === "tool") return Effect.fail(unsupported(method, "tool messages are not supported"))
    const texts: Array<string> = []
    for (const part of message.content) {
      if (part.type === "text") texts.push(part.text)
      else if (part.type !== "reasoning") return Effect.fail(unsupported(method, `${part.type} parts are not supported`))
    }
    return Effect.succeed({ role: message.role, content: texts.join("\n") })
  })

/** The strict JSON schema OpenAI accepts for a structured output (the transformer throws on schemas it cannot express). */
const jsonSchemaOf = (schema: Schema.Top, method: string) =>
  Effect.try({
    try: () => OpenAiStructuredOutput.toCodecOpenAI(schema).jsonSchema,
    catch: (e) =>
      AiError.make({ module: "OpenAiChat", method, reason: new AiError.UnsupportedSchemaError({ description: e instanceof Error ? e.message : String(e) }) })
  })

/** The model over the endpoint. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const client = yield* HttpClient.HttpClient
  const endpoint: OpenAiHttp.Endpoint = { baseUrl: options.baseUrl, apiKey: options.apiKey, timeout: options.timeout ?? defaultTimeout }

  const complete = (providerOptions: LanguageModel.ProviderOptions, method: string) =>
    Effect.gen(function*() {
      if (providerOptions.tools.length > 0) return yield* unsupported(method, "tools are not supported")
      const messages = yield* messagesOf(providerOptions.prompt, method)
      const format = providerOptions.responseFormat
      const responseFormat = format.type === "json"
        ? {
          type: "json_schema",
          json_schema: { name: format.objectName, strict: true, schema: yield* jsonSchemaOf(format.schema, method) }
        }
        : undefined
      const response = yield* OpenAiHttp.postJson(client, endpoint, { module: "OpenAiChat", method, path: "/chat/completions" }, {
        model: options.model,
        messages,
        temperature: options.temperature ?? 0,
        ...(responseFormat === undefined ? {} : { response_format: responseFormat })
      }, ChatResponse)
      const choice = response.choices[0]
      if (choice === undefined) {
        return yield* AiError.make({ module: "OpenAiChat", method, reason: new AiError.InvalidOutputError({ description: "no choices in the completion" }) })
      }
      return {
        text: choice.message.content ?? "",
        reason: finishReasons[choice.finish_reason ?? ""] ?? (choice.finish_reason == null ? "unknown" : "other"),
        usage: {
          inputTokens: { total: response.usage?.prompt_tokens },
          outputTokens: { total: response.usage?.completion_tokens }
        }
      } as const
    })

  return yield* LanguageModel.make({
    generateText: (providerOptions) =>
      Effect.map(complete(providerOptions, "generateText"), (c): Array<Response.PartEncoded> => [
        ...(c.text === "" ? [] : [{ type: "text" as const, text: c.text }]),
        { type: "finish", reason: c.reason, usage: c.usage }
      ]),
    // The endpoint is called without `stream`; the completion arrives as one delta.
    streamText: (providerOptions) =>
      Stream.fromIterableEffect(
        Effect.map(complete(providerOptions, "streamText"), (c): Array<Response.StreamPartEncoded> => [
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: c.text },
          { type: "text-end", id: "0" },
          { type: "finish", reason: c.reason, usage: c.usage }
        ])
      ),
    codecTransformer: OpenAiStructuredOutput.toCodecOpenAI
  })
})
