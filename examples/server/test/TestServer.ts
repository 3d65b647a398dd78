/**
 * Starts the example server in this process on a free loopback port, on PGlite
 * (in memory) or on a fresh database of the PostgreSQL server, with a seed file
 * written for the test; gives its URL and a way to mint tokens.
 */
import { Effect, Layer, Logger, type Redacted } from "effect"
import { createServer } from "node:net"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TokenVerifier } from "@modelgate/http"
import { ScratchDatabase } from "@modelgate/sql"
import * as Server from "../src/Server.ts"

/** A free loopback port. */
export const freePort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, "127.0.0.1", () => {
        const address = s.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        s.close(() => resolve(port))
      })
    })
  )

/** The PostgreSQL server for server-backed runs. */
export const serverUrl: string | undefined = process.env["DATABASE_URL"]

/** A fresh database on the server, dropped when the scope closes. */
export const freshDatabase = (url: string) => ScratchDatabase.make(url, "modelgate_e2e")

/** A running test server. */
export interface Running {
  readonly url: string
  readonly token: (sub: string, extra?: { readonly email?: string; readonly groups?: ReadonlyArray<string> }) => Promise<string>
  /** A bearer token for the MCP server (its audience is the MCP resource). */
  readonly mcpToken: (sub: string) => Promise<string>
  readonly jwtSecret: Redacted.Redacted<string>
  readonly logs: ReadonlyArray<string>
  /** The development API key of the seed's first user. */
  readonly apiKey: string | undefined
}

/** Starts a server with `seed` (an object written to a temp file) for the current scope. */
export const start = (seed: unknown, options: {
  readonly backend: "pglite" | "postgres"
  readonly rateLimit?: number
  readonly adminHost?: string
  readonly oauth?: { readonly jwksUrl: string; readonly issuer: string }
}) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "modelgate-e2e-"))
    const seedPath = join(dir, "seed.json")
    writeFileSync(seedPath, JSON.stringify(seed))
    const port = yield* freePort()
    const databaseUrl = options.backend === "postgres" && serverUrl !== undefined ? (yield* freshDatabase(serverUrl)).url : undefined
    const logs: Array<string> = []
    let started: Server.Started | undefined
    const layer = Server.layer({
      port,
      host: "127.0.0.1",
      databaseUrl,
      seedPath,
      secretKeys: `*e2e=${btoa(String.fromCharCode(...new Uint8Array(32).fill(9)))}`,
      rateLimit: options.rateLimit ?? 1_000_000,
      connectTimeoutMillis: 3_000,
      adminHost: options.adminHost,
      oauth: options.oauth
    }, (s) => Effect.sync(() => {
      started = s
    })).pipe(Layer.provide(Logger.layer([Logger.make((o) => {
      logs.push(JSON.stringify(o.message))
    })])))
    yield* Layer.build(layer)
    const s = started
    if (s === undefined) return yield* Effect.die(new Error("the server did not start"))
    const running: Running = {
      url: s.url,
      jwtSecret: s.jwtSecret,
      logs,
      apiKey: s.apiKey,
      token: (sub, extra = {}) => TokenVerifier.signHs256(s.jwtSecret, { sub, ...extra }, { issuer: s.issuer, audience: s.audience }),
      mcpToken: (sub) => TokenVerifier.signHs256(s.jwtSecret, { sub }, { issuer: s.issuer, audience: s.mcpAudience })
    }
    return running
  })

/** A JSON request; returns status, parsed body (or text) and headers. */
export const call = async (
  url: string,
  init: { readonly method?: string; readonly token?: string; readonly body?: unknown; readonly raw?: string | Uint8Array; readonly contentType?: string } = {}
) => {
  const headers: Record<string, string> = {}
  if (init.token !== undefined) headers["authorization"] = `Bearer ${init.token}`
  const body = init.raw !== undefined ? init.raw : init.body === undefined ? undefined : JSON.stringify(init.body)
  if (body !== undefined) headers["content-type"] = init.contentType ?? "application/json"
  const response = await fetch(url, { method: init.method ?? "GET", headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, json, text, headers: response.headers }
}
