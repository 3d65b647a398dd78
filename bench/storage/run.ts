/**
 * Storage benchmark: operations per second of a connection update (read, merge,
 * seal secrets, optimistic save) and a package-permission create, through the
 * repositories, beside the bare SQL statements they issue over the same driver
 * (no decoding, no sealing), and the ratio. On PGlite (in memory) and, when
 * DATABASE_URL is set, on a fresh database of the PostgreSQL server.
 *
 *   npm run bench:storage [-- --iterations 500]
 */
import { DateTime, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ConnectionRepo, OrganizationRepo, PermissionRepo, Roles, SecretCipher } from "@modelgate/core"
import { Pglite, ScratchDatabase, Storage } from "@modelgate/sql"

const argIndex = process.argv.indexOf("--iterations")
const iterations = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 500

const timed = <A, E, R>(n: number, f: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    for (let i = 0; i < n; i++) yield* f(i)
    return n / ((performance.now() - start) / 1000)
  })

const bench = (label: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const orgs = yield* OrganizationRepo.OrganizationRepo
    const connections = yield* ConnectionRepo.ConnectionRepo
    const permissions = yield* PermissionRepo.PermissionRepo
    const now = yield* DateTime.now
    yield* orgs.insertOrganization({ name: "bench", createdAt: now })
    yield* orgs.insertEnvironment({ organization: "bench", name: "prod", createdAt: now })
    const ref = { organization: "bench", environment: "prod", name: "warehouse" }
    yield* connections.insert({
      organization: "bench", environment: "prod",
      settings: {
        name: "warehouse", type: "postgres", excludeAllTables: false,
        proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: "u", privateKey: "K".repeat(1600) } },
        postgresConnection: { host: "db", port: 5432, databaseName: "sales", userName: "reader", password: "pw", sslmode: "no-verify" }
      },
      indexingStatus: "INDEXED", indexingStatusLastUpdated: now, indexingProgress: null, createdAt: now, updatedAt: now, revision: 0
    })

    // Warm up both paths.
    yield* timed(20, (i) => Effect.flatMap(connections.get(ref), (c) => connections.save({ ...c, settings: { ...c.settings, postgresConnection: { ...c.settings.postgresConnection, password: `w${i}` } } })))

    const repoUpdate = yield* timed(iterations, (i) =>
      Effect.flatMap(connections.get(ref), (c) =>
        connections.save({ ...c, settings: { ...c.settings, postgresConnection: { ...c.settings.postgresConnection, password: `pw-${i}` } } })))

    // The same two statements with ready-made parameters.
    const row = (yield* sql<{ settings: unknown; revision: number }>`SELECT settings, revision FROM connections WHERE name = 'warehouse'`)[0]
    const settingsText = JSON.stringify(row?.settings)
    const bareUpdate = yield* timed(iterations, () =>
      Effect.gen(function*() {
        const current = yield* sql<{ revision: number }>`
          SELECT * FROM connections WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}`
        const revision = current[0]?.revision ?? 0
        yield* sql`
          UPDATE connections SET type = 'postgres', settings = ${settingsText}::jsonb, secret_key_ids = ${["bench"]}::text[],
            indexing_status = 'INDEXED', indexing_status_last_updated = ${DateTime.formatIso(now)}::timestamptz,
            indexing_progress = 'null'::jsonb, updated_at = ${DateTime.formatIso(now)}::timestamptz, revision = revision + 1
          WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND name = ${ref.name}
            AND revision = ${revision}
          RETURNING *`
      }))

    const scope = Roles.packageScope("bench", "prod", "sales")
    const repoPermission = yield* timed(iterations, (i) =>
      permissions.upsert({ principal: `user:u${i}@example.com`, scope, role: "viewer", createdAt: now, updatedAt: now }))
    const scopeJson = JSON.stringify({ _tag: "Package", organization: "bench", environment: "prod", package: "sales" })
    const barePermission = yield* timed(iterations, (i) =>
      sql`
        INSERT INTO grants (organization, scope_key, scope, grantee, principal, workspace, role, message, created_at, updated_at)
        VALUES ('bench', 'bench/prod/sales', ${scopeJson}::jsonb, ${`user:b${i}@example.com`}, ${`user:b${i}@example.com`}, ${null},
          'viewer', ${null}, ${DateTime.formatIso(now)}::timestamptz, ${DateTime.formatIso(now)}::timestamptz)
        ON CONFLICT (scope_key, grantee) DO UPDATE SET role = EXCLUDED.role, message = EXCLUDED.message, updated_at = EXCLUDED.updated_at
        RETURNING *, (xmax = 0) AS inserted`)

    const fmt = (x: number) => x.toFixed(0).padStart(8)
    console.log(`\n${label} (${iterations} sequential operations each)`)
    console.log("operation            repository ops/s   bare SQL ops/s   ratio")
    console.log(`connection update    ${fmt(repoUpdate)}           ${fmt(bareUpdate)}         ${(repoUpdate / bareUpdate).toFixed(2)}`)
    console.log(`permission create    ${fmt(repoPermission)}           ${fmt(barePermission)}         ${(repoPermission / barePermission).toFixed(2)}`)
  })

const storage = <E>(client: Layer.Layer<SqlClient, E>) =>
  Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(client))

const server = (url: string) =>
  Layer.unwrap(Effect.map(ScratchDatabase.make(url, "modelgate_bench"), (db) => Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 4 })))

const program = Effect.gen(function*() {
  yield* bench("PGlite (in memory)").pipe(Effect.provide(storage(Pglite.layer({}))))
  const url = process.env["DATABASE_URL"]
  if (url === undefined) console.log("\nPostgreSQL server: skipped (set DATABASE_URL)")
  else yield* bench("PostgreSQL server").pipe(Effect.provide(storage(server(url))))
})

Effect.runPromise(Effect.scoped(program)).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
