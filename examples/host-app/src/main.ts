/**
 * The host application: its own `node:http` server with its own pages (`/`, `/login`) and its own
 * sessions, and modelgate embedded under `/platform` (admin API at `/platform/api/v0`, MCP server at
 * `/platform/mcp`). Configuration: PORT, HOST, PUBLIC_URL, DATA_DIR, MODELGATE_SECRET_KEYS.
 * Prints `listening on <url>` once it serves.
 */
import { Effect } from "effect"
import { NodeRuntime } from "@effect/platform-node"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as Platform from "./Platform.ts"
import { cookieName, Sessions, type User } from "./Sessions.ts"

const users: ReadonlyArray<User> = [
  { id: "alice", email: "alice@host.test" },
  { id: "bob", email: "bob@host.test" }
]

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

const program = Effect.gen(function*() {
  const port = Number(process.env["PORT"] ?? "8080")
  const host = process.env["HOST"] ?? "127.0.0.1"
  const publicUrl = process.env["PUBLIC_URL"] ?? `http://${host}:${port}`
  const prefix = "/platform"
  const sessions = new Sessions()
  const platform = yield* Platform.start({
    publicUrl,
    prefix,
    organization: "acme",
    secretKeys: process.env["MODELGATE_SECRET_KEYS"] ?? Platform.randomSecretKeys(),
    dataDir: process.env["DATA_DIR"],
    users,
    sessions
  })

  // The host's own routes; everything under the prefix is modelgate's.
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", publicUrl)
    if (url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)) return platform(request, response)
    if (url.pathname === "/" && request.method === "GET") {
      const user = sessions.fromHeaders(request.headers)
      return json(response, 200, { app: "host-app", signedInAs: user?.id ?? null })
    }
    if (url.pathname === "/login" && request.method === "POST") {
      const user = users.find((u) => u.id === url.searchParams.get("user"))
      if (user === undefined) return json(response, 401, { error: "unknown user" })
      const token = sessions.open(user)
      return json(response, 200, { session: token }, { "set-cookie": `${cookieName}=${token}; HttpOnly; SameSite=Lax; Path=/` })
    }
    return json(response, 404, { error: "not found" })
  }

  const server = createServer(handle)
  yield* Effect.acquireRelease(
    Effect.callback<void>((resume) => {
      server.listen(port, host, () => resume(Effect.void))
    }),
    () => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )
  yield* Effect.sync(() => console.log(`listening on ${publicUrl}`))
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(program))
