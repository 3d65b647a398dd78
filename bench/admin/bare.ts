/**
 * The bare baseline of the admin benchmark: a node:http server that runs the
 * same SQL statements as PATCH version and POST permission (authorization reads
 * included) through the same driver (@effect/sql-pg), with no framework, token
 * verification, schemas or rules.
 * Usage: node bare.ts <port> <database url>
 */
import { DateTime, Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { Storage } from "@modelgate/sql"

const [portArg, url] = process.argv.slice(2)
if (portArg === undefined || url === undefined) throw new Error("usage: bare.ts <port> <database url>")
const runtime = ManagedRuntime.make(Storage.layerPostgres({ url: Redacted.make(url), maxConnections: 10 }))

const scopes = ["bench", "bench/prod", "bench/prod/shop"]

// What Access.authorize reads: the caller's groups, then its grants at the scope and above.
const authorize = Effect.gen(function*() {
  const sql = yield* SqlClient
  yield* sql`SELECT * FROM groups WHERE organization = 'bench' AND members @> ${JSON.stringify(["root"])}::jsonb ORDER BY name`
  yield* sql`SELECT * FROM grants WHERE scope_key = ANY(${scopes}::text[]) AND grantee = ANY(${["user:root", "user:root@bench.test"]}::text[]) ORDER BY scope_key, grantee`
})

const patchVersion = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* authorize
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
    yield* authorize
    yield* sql`
      SELECT p.*, (SELECT v.id FROM package_versions v WHERE v.organization = p.organization AND v.environment = p.environment
                   AND v.package = p.name AND v.is_latest) AS latest_version_id
      FROM packages p WHERE p.organization = 'bench' AND p.environment = 'prod' AND p.name = 'shop'`
    yield* sql`
      INSERT INTO grants (organization, scope_key, scope, grantee, principal, workspace, role, message, created_at, updated_at)
      VALUES ('bench', 'bench/prod/shop', '{"_tag":"Package","organization":"bench","environment":"prod","package":"shop"}'::jsonb,
        ${`user:b${i}@bench.test`}, ${`user:b${i}@bench.test`}, ${null}, 'viewer', ${null}, ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (scope_key, grantee) DO UPDATE SET role = EXCLUDED.role, updated_at = EXCLUDED.updated_at
      RETURNING *, (xmax = 0) AS inserted`
    // The inherited level of the new grantee: its user, its groups, its grants above.
    yield* sql`SELECT * FROM users WHERE lower(email) = lower(${`b${i}@bench.test`})`
    yield* sql`SELECT * FROM grants WHERE scope_key = ANY(${scopes}::text[]) AND grantee = ANY(${[`user:b${i}@bench.test`]}::text[])`
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
