/**
 * Phrase extraction by a language model: a `Phrases.Extractor` that asks any effect/ai
 * `LanguageModel` for the question's phrases as a structured object (text, kind, description),
 * keeps those that are substrings of the question, and puts them in question order. With
 * `fromConfig` the model is `OpenAiChat` over an OpenAI-compatible endpoint. A failure or timeout
 * is logged as a warning and the service falls back to offline extraction.
 */
import { Cause, Config, Duration, Effect, Option, Redacted, Schema } from "effect"
import { type AiError, LanguageModel } from "effect/ai"
import type { HttpClient } from "effect/http"
import * as OpenAiChat from "./OpenAiChat.ts"
import * as Phrases from "./Phrases.ts"
import type * as Retrieval from "./Retrieval.ts"

const Kind = Schema.Literals(["entity", "group_by", "filter", "time", "grain"])

/** What the model answers. */
export const Extracted = Schema.Struct({
  phrases: Schema.Array(Schema.Struct({
    text: Schema.String.annotate({ description: "Copied verbatim from the question" }),
    kind: Kind,
    description: Schema.String.annotate({ description: "What the phrase asks of the data, in a few words" })
  }))
})

/** The instructions sent with every question. */
export const instructions = [
  "You split a question about business data into the short phrases a search matches against the fields of semantic data models",
  "(sources, dimensions, measures, views). Copy each phrase verbatim from the question, without articles or function words.",
  "Kinds: entity = what to measure or look up (\"return rate\", \"revenue\"); group_by = what results are broken down by",
  "(\"brand\" in \"by brand\"); filter = a specific value, name or code (\"Footwear\", \"JFK\", \"cancelled\");",
  "time = a time range (\"2024\", \"last twelve months\"); grain = a time grain or trend (\"monthly\", \"over time\").",
  "Describe each phrase in a few words. A question unrelated to business data has no phrases."
].join(" ")

/**
 * The model's phrases aligned with the question: each kept only when it occurs in it (case
 * ignored; the question's own spelling is returned), once, in question order.
 */
export const align = (question: string, extracted: typeof Extracted.Type): Array<Phrases.Phrase> => {
  const lower = question.toLowerCase()
  const found: Array<{ at: number; phrase: Phrases.Phrase }> = []
  const seen = new Set<string>()
  for (const p of extracted.phrases) {
    const wanted = p.text.trim().toLowerCase()
    const at = wanted === "" ? -1 : lower.indexOf(wanted)
    if (at < 0 || seen.has(wanted)) continue
    seen.add(wanted)
    const description = p.description.trim()
    found.push({ at, phrase: { text: question.slice(at, at + wanted.length), kind: p.kind, description: description === "" ? p.kind : description } })
  }
  return found.sort((x, y) => x.at - y.at).map((f) => f.phrase)
}

const messageOf = (e: unknown): string => typeof e === "string" ? e : e instanceof Error ? e.message : String(e)

/**
 * The extractor over a language model. It fails (and the service extracts offline) when the model
 * fails or times out, or when it named phrases of which none occurs in the question.
 */
export const extractor = (model: LanguageModel.LanguageModel, options: { readonly name: string }): Phrases.Extractor => ({
  extract: (question) =>
    model.generateObject({ objectName: "phrases", schema: Extracted, prompt: [
      { role: "system", content: instructions },
      { role: "user", content: question }
    ] }).pipe(
      Effect.mapError((e: AiError.AiError) => e.message),
      Effect.flatMap((response) => {
        const phrases = align(question, response.value)
        return phrases.length === 0 && response.value.phrases.length > 0
          ? Effect.fail(`none of the phrases ${JSON.stringify(response.value.phrases.map((p) => p.text))} occurs in the question`)
          : Effect.succeed(phrases)
      }),
      // A defect of the adapter must not fail get_context either: it is a failure like any other.
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.interrupt
          : Effect.fail(new Phrases.ExtractionFailed({ message: messageOf(Cause.squash(cause)) }))
      ),
      Effect.tapError((e) => Effect.logWarning(`get_context: phrase model ${options.name} failed, offline extraction used: ${e.message}`))
    )
})

/** The retrieval's phrase extractor over `OpenAiChat`. */
export const layerOptions = (options: OpenAiChat.Options): Effect.Effect<Pick<Retrieval.Options, "phraseExtractor">, never, HttpClient.HttpClient> =>
  Effect.map(OpenAiChat.make(options), (model) => ({ phraseExtractor: extractor(model, { name: options.model }) }))

/**
 * The retrieval's phrase extractor from the environment: off (no member) unless
 * `MODELGATE_LLM_BASE_URL` is set and not blank; then `MODELGATE_LLM_MODEL` is required, and
 * `MODELGATE_LLM_API_KEY` and `MODELGATE_LLM_TIMEOUT` (e.g. `5 seconds`) are optional.
 */
export const fromConfig: Effect.Effect<Pick<Retrieval.Options, "phraseExtractor">, Config.ConfigError, HttpClient.HttpClient> = Effect.gen(
  function*() {
    const baseUrl = Option.filter(yield* Config.option(Config.String("MODELGATE_LLM_BASE_URL")), (s) => s.trim() !== "")
    if (Option.isNone(baseUrl)) return {}
    const apiKey = Option.filter(yield* Config.option(Config.Redacted("MODELGATE_LLM_API_KEY")), (k) => Redacted.value(k) !== "")
    return yield* layerOptions({
      baseUrl: baseUrl.value.trim(),
      apiKey: Option.getOrUndefined(apiKey),
      model: yield* Config.NonEmptyString("MODELGATE_LLM_MODEL"),
      timeout: yield* Config.Duration("MODELGATE_LLM_TIMEOUT").pipe(Config.withDefault<Duration.Duration>(OpenAiChat.defaultTimeout))
    })
  }
)
