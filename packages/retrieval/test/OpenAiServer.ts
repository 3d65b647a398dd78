/**
 * A real local HTTP server speaking as an OpenAI-compatible endpoint, for the adapter tests: it
 * records each request (path, headers, JSON body) and answers what the test's `reply` says, or
 * never answers ("hang"). Also a tiny in-memory model to search, a logger that keeps warnings,
 * and a helper that searches with given retrieval options.
 */
import { type ContextIndex, SemanticRuntime } from "@modelgate/core"
import { Effect, Layer, Logger } from "effect"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import * as EntityIndex from "../src/EntityIndex.ts"
import * as Retrieval from "../src/Retrieval.ts"

/** A request the server received. */
export interface Recorded {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

/** What to answer: a status and a JSON body (or raw text), or nothing at all. */
export type Reply = { readonly status: number; readonly json?: unknown; readonly text?: string } | "hang"

/** Serves `reply` on 127.0.0.1 until the scope closes; `url` ends with `/v1`. */
export const serve = (reply: (request: Recorded) => Reply) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly requests: Array<Recorded>; readonly close: () => void }>((resume) => {
      const requests: Array<Recorded> = []
      const hanging: Array<ServerResponse> = []
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const recorded: Recorded = { path: req.url ?? "", headers: req.headers, body: text === "" ? undefined : JSON.parse(text) }
          requests.push(recorded)
          const answer = reply(recorded)
          if (answer === "hang") return void hanging.push(res)
          res.writeHead(answer.status, { "content-type": answer.text === undefined ? "application/json" : "text/plain" })
          res.end(answer.text ?? JSON.stringify(answer.json ?? {}))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}/v1`,
          requests,
          close: () => {
            for (const res of hanging) res.destroy()
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    (s) => Effect.sync(() => s.close())
  )

/** Warnings logged while the effect runs, beside its result. */
export const withWarnings = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
    return effect.pipe(
      Effect.map((value) => ({ value, warnings })),
      Effect.provide(Logger.layer([logger]))
    )
  })

const entity = (e: Partial<SemanticRuntime.ModelEntity> & Pick<SemanticRuntime.ModelEntity, "kind" | "source" | "name">): SemanticRuntime.ModelEntity => ({
  path: [], dataType: "", doc: undefined, tags: [], ...e
})

/** A shop: sales with a status, and carriers. No word is shared by "turnover" and any entity. */
export const model: SemanticRuntime.ModelInfo = {
  modelPath: "shop.malloy",
  entities: [
    entity({ kind: "source", source: "order_items", name: "order_items", doc: "One row per unit sold." }),
    entity({ kind: "measure", source: "order_items", name: "total_sales", dataType: "number", doc: "Sum of prices paid in USD." }),
    entity({ kind: "dimension", source: "order_items", name: "status", dataType: "string", doc: "Fulfilment state.", tags: ["index_values"] }),
    entity({ kind: "source", source: "carriers", name: "carriers", doc: "Parcel delivery companies." }),
    entity({ kind: "dimension", source: "carriers", name: "carrier_name", dataType: "string", doc: "Marketing name of the carrier." })
  ]
}

/** The runtime over `model`: `status` holds Complete and Cancelled. */
export const RuntimeLayer = SemanticRuntime.SemanticRuntime.layerMemoryWith({
  models: [model],
  run: (request) => {
    const row = (v: string, n: number) => ({ [EntityIndex.valueColumn]: v, [EntityIndex.countColumn]: n })
    if (request._tag === "Custom" && request.query.includes("`status`")) return [row("Complete", 90), row("Cancelled", 10)]
    if (request._tag === "Custom" && request.query.includes("`carrier_name`")) return [row("Parcel Express", 5)]
    return []
  }
})

/** The one version of `model`. */
export const target: Retrieval.Target = {
  project: "demo",
  package: "shop",
  version: { organization: "acme", environment: "demo", package: "shop", version: "1", location: "acme/demo/shop/1" }
}

/** Searches `question` with a fresh service of these options (no offline word vectors: only lexical and value signals, and the remote ones). */
export const search = (question: string, options: Retrieval.Options = {}): Effect.Effect<Retrieval.SearchResult, ContextIndex.IndexBuildFailed> =>
  Effect.gen(function*() {
    const retrieval = yield* Retrieval.Retrieval
    return yield* retrieval.search({ question, targets: [target] })
  }).pipe(Effect.provide(Retrieval.layer({ vectors: Effect.succeed(undefined), ...options }).pipe(Layer.provide(RuntimeLayer))))
