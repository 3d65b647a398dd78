/**
 * The bare baseline of the admin benchmark: a node:http server that runs the
 * same SQL statements as PATCH version and POST permission through the same
 * driver (@effect/sql-pg), with no framework, authentication or rules.
 * Usage: node bare.ts <port> <database url>
 */
import { DateTime, Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { Storage } from "@modelgate/sql"

const [portArg, url] = process.argv.slice(2)
if (portArg === undefined || url === undefined) throw new Error("usage: bare.ts <port> <database url>")
const runtime = ManagedRuntime.make(Storage.layerPostgres({ url: Redacted.make(url), maxConnections: 10 }))

const patchVersion = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ record: unknown; revision: number }>`
      SELECT record, revision FROM package_versions WHERE organization = 'bench' AND environment = 'prod' AND package = 'shop' AND id = ${id}`
    const row = rows[0]
    if (row === undefined) return 404
    yield* sql`
      UPDATE package_versions SET record = ${JSON.stringify(row.record)}::jsonb, promote_when_ready = false, revision = revision + 1
      WHERE organization = 'bench' AND environment = 'prod' AND package = 'shop' AND id = ${id} AND revision = ${row.revision}
      RETURNING record, revision`
    return 200
  })

const postPermission = (i: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const now = DateTime.formatIso(yield* DateTime.now)
    yield* sql`SELECT * FROM grants WHERE scope_key = ANY(${["bench", "bench/prod", "bench/prod/shop"]}::text[])`
    yield* sql`
      INSERT INTO grants (organization, scope_key, scope, grantee, principal, workspace, role, message, created_at, updated_at)
      VALUES ('bench', 'bench/prod/shop', '{"_tag":"Package","organization":"bench","environment":"prod","package":"shop"}'::jsonb,
        ${`user:b${i}@bench.test`}, ${`user:b${i}@bench.test`}, ${null}, 'viewer', ${null}, ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (scope_key, grantee) DO UPDATE SET role = EXCLUDED.role, updated_at = EXCLUDED.updated_at
      RETURNING *, (xmax = 0) AS inserted`
    return 201
  })

let counter = 0
createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const effect = req.method === "PATCH" ? patchVersion(decodeURIComponent((req.url ?? "/").slice(1))) : postPermission(counter++)
    runtime.runPromise(effect).then((status) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end("{}")
    }, () => {
      res.writeHead(500)
      res.end()
    })
  })
}).listen(Number(portArg), "127.0.0.1", () => process.stdout.write("ready\n"))
