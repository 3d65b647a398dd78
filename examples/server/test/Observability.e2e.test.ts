import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { freePort } from "./TestServer.ts"

const main = resolve(import.meta.dirname, "../src/main.ts")

interface Attribute {
  readonly key: string
  readonly value: { readonly stringValue?: string }
}
interface Span {
  readonly name: string
  readonly attributes: ReadonlyArray<Attribute>
}

/** An OTLP/HTTP JSON collector on a free port: what it received, by signal. */
const collector = () =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly received: Map<string, Array<unknown>>; readonly close: () => void }>((done) => {
        const received = new Map<string, Array<unknown>>()
        const server = createServer((request, response) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => {
            const list = received.get(request.url ?? "") ?? []
            list.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
            received.set(request.url ?? "", list)
            response.writeHead(200, { "content-type": "application/json" }).end("{}")
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          done({ url: `http://127.0.0.1:${port}`, received, close: () => server.close() })
        })
      })
    ),
    (c) => Effect.sync(c.close)
  )

const spansOf = (batches: ReadonlyArray<unknown>): Array<Span> =>
  (batches as ReadonlyArray<{ resourceSpans: ReadonlyArray<{ scopeSpans: ReadonlyArray<{ spans: ReadonlyArray<Span> }> }> }>)
    .flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)))
const attribute = (span: Span, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue

describe("observability of the example server process", () => {
  it.live("JSON log lines with the request id and no secret; spans and metrics at the OTLP collector; /ready", () =>
    Effect.scoped(Effect.gen(function*() {
      const otlp = yield* collector()
      const port = yield* freePort()
      const dataDir = mkdtempSync(join(tmpdir(), "modelgate-observability-"))
      const child = spawn(process.execPath, ["--conditions=@modelgate/source", main], {
        env: {
          ...process.env,
          PORT: String(port),
          MODELGATE_DATA_DIR: dataDir,
          DATABASE_URL: "",
          MODELGATE_LOG_FORMAT: "json",
          MODELGATE_LOG_LEVEL: "Debug",
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_SERVICE_NAME: "modelgate-test",
          OTEL_BSP_SCHEDULE_DELAY: "200",
          OTEL_METRIC_EXPORT_INTERVAL: "200"
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
      const stderr: Array<string> = []
      createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line))
      let token = ""
      const apiKey = yield* Effect.promise(() =>
        new Promise<string>((done, fail) => {
          createInterface({ input: child.stdout }).on("line", (line) => {
            const match = /^\s+token:\s+(\S+)$/.exec(line)
            if (match?.[1] !== undefined) token = match[1]
            const key = /^\s+API key:\s+(\S+)/.exec(line)
            if (key?.[1] !== undefined) done(key[1])
          })
          child.on("exit", (code) => fail(new Error(`exited early with ${code}: ${stderr.join("\n")}`)))
        })
      )
      const base = `http://127.0.0.1:${port}`
      const ready = yield* Effect.promise(() => fetch(`${base}/ready`))
      assert.strictEqual(ready.status, 200)
      assert.deepStrictEqual(yield* Effect.promise(() => ready.json()), { status: "ready" })

      // A well-formed X-Request-Id is kept and echoed; a malformed one is replaced by a fresh id.
      const secret = "SECRET-MARKER-in-query"
      const admin = yield* Effect.promise(() =>
        fetch(`${base}/api/v0/organizations/demo/environments/demo/connections?token=${secret}`, {
          headers: { authorization: `Bearer ${token}`, "x-request-id": "test-admin-1" }
        })
      )
      assert.strictEqual(admin.status, 200)
      assert.strictEqual(admin.headers.get("x-request-id"), "test-admin-1")
      const malformed = yield* Effect.promise(() => fetch(`${base}/health`, { headers: { "x-request-id": "bad id\twith spaces" } }))
      const generated = malformed.headers.get("x-request-id") ?? ""
      assert.match(generated, /^[0-9a-f-]{36}$/)

      const mcp = (id: string, body: unknown, headers: Record<string, string> = {}) =>
        Effect.promise(() =>
          fetch(`${base}/mcp`, {
            method: "POST",
            headers: { authorization: `ApiKey ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream", "x-request-id": id, ...headers },
            body: JSON.stringify(body)
          })
        )
      const init = yield* mcp("test-mcp-init", { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "otlp", version: "0" } } })
      assert.strictEqual(init.status, 200)
      const session = init.headers.get("mcp-session-id") ?? ""
      const call = yield* mcp(
        "test-mcp-tool",
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_context", arguments: { natural_language_query: "orders per channel", project_name: "demo" } } },
        { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }
      )
      assert.strictEqual(call.status, 200)
      assert.strictEqual(call.headers.get("x-request-id"), "test-mcp-tool")
      yield* Effect.promise(() => call.text())

      // Spans and metrics arrive within a few export intervals.
      const deadline = Date.now() + 15_000
      let spans: Array<Span> = []
      while (Date.now() < deadline) {
        spans = spansOf(otlp.received.get("/v1/traces") ?? [])
        const metrics = JSON.stringify(otlp.received.get("/v1/metrics") ?? [])
        if (spans.some((s) => s.name === "mcp.get_context") && spans.some((s) => attribute(s, "request.id") === "test-admin-1") && metrics.includes("http.server.requests")) break
        yield* Effect.sleep("100 millis")
      }
      const adminSpan = spans.find((s) => attribute(s, "request.id") === "test-admin-1")
      assert.isDefined(adminSpan, "a span of the admin request carries its request id")
      const tool = spans.find((s) => s.name === "mcp.get_context")
      assert.isDefined(tool, "the MCP tool call has a span")
      assert.strictEqual(tool !== undefined ? attribute(tool, "request.id") : undefined, "test-mcp-tool")
      const metrics = JSON.stringify(otlp.received.get("/v1/metrics") ?? [])
      assert.include(metrics, "http.server.requests")
      assert.include(metrics, "http.server.request.duration")
      assert.include(JSON.stringify(otlp.received.get("/v1/traces")), "modelgate-test")

      child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => exited), 0)

      // Every log line is one JSON object; the request's line names its id, path (no query) and status.
      assert.isAbove(stderr.length, 0)
      const lines = stderr.map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })
      const adminLine = lines.find((l) => l.message === "request" && l.annotations["request.id"] === "test-admin-1")
      assert.isDefined(adminLine)
      assert.deepInclude(adminLine?.annotations ?? {}, {
        "http.method": "GET",
        "http.path": "/api/v0/organizations/demo/environments/demo/connections",
        "http.status": 200
      })
      assert.isNumber(adminLine?.annotations["duration.ms"])
      assert.isTrue(lines.some((l) => l.message === "request" && l.annotations["request.id"] === "test-mcp-tool"))
      const all = stderr.join("\n") + JSON.stringify([...otlp.received.values()])
      for (const secretValue of [secret, token, apiKey]) assert.notInclude(all, secretValue)
    })), 120_000)
})
