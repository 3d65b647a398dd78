import { assert, describe, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Logger, References } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Connection, ConnectionRepo, Errors, VersionRepo } from "@modelgate/core"
import { connection, scaffold, version } from "./Conformance.ts"
import type { Repositories } from "../src/Storage.ts"
import { pgliteClient, serverClient, serverUrl, storageOn } from "./TestDatabase.ts"

// Every secret field of every settings object, each a unique marker.
const marker = (field: string) => `MARKER-${field}-7c1f`
const allSecrets = (name: string): Connection.ConnectionSettings => ({
  name,
  type: "duckdb",
  excludeAllTables: false,
  proxy: { type: "ssh", ssh: { host: "b", port: 22, username: "u", privateKey: marker("sshKey"), privateKeyPass: marker("sshPass") } },
  duckdbConnection: {
    attachedDatabases: [
      { name: "s3db", type: "s3", s3Connection: { accessKeyId: "k", secretAccessKey: marker("s3Secret"), sessionToken: marker("s3Session"), region: "us-east-1" } },
      { name: "gcsdb", type: "gcs", gcsConnection: { keyId: "k", secret: marker("gcsSecret") } },
      { name: "azsas", type: "azure", azureConnection: { authType: "sas_token", sasUrl: marker("azSas") } },
      { name: "azsp", type: "azure", azureConnection: { authType: "service_principal", tenantId: "t", clientId: "c", clientSecret: marker("azClient"), accountName: "a", fileUrl: "az://c/x" } },
      { name: "pgdb", type: "postgres", postgresConnection: { host: "x", password: marker("attPgPw") } },
      { name: "pgcs", type: "postgres", postgresConnection: { connectionString: marker("attPgConn") } },
      { name: "sfdb", type: "snowflake", snowflakeConnection: { account: "a", username: "u", password: marker("sfPw"), privateKey: marker("sfKey"), privateKeyPass: marker("sfPass") } },
      { name: "bqdb", type: "bigquery", bigqueryConnection: { serviceAccountKeyJson: marker("bqKey") } }
    ]
  }
})
// Settings objects of the other types, stored as separate connections.
const others = (organization: string): ReadonlyArray<ConnectionRepo.ConnectionRecord> => {
  const base = connection(organization, "x")
  const make = (name: string, s: Omit<Connection.ConnectionSettings, "name" | "excludeAllTables">): ConnectionRepo.ConnectionRecord =>
    ({ ...base, settings: { name, excludeAllTables: false, ...s } })
  return [
    make("pg", { type: "postgres", postgresConnection: { host: "h", password: marker("pgPw") } }),
    make("pgcs", { type: "postgres", postgresConnection: { connectionString: marker("pgConn") } }),
    make("bq", { type: "bigquery", bigqueryConnection: { defaultProjectId: "p", serviceAccountKeyJson: marker("bqTop") } }),
    make("sf", { type: "snowflake", snowflakeConnection: { account: "a", username: "u", password: marker("sfTopPw"), privateKey: marker("sfTopKey"), privateKeyPass: marker("sfTopPass") } }),
    make("tr", { type: "trino", trinoConnection: { server: "https://t", password: marker("trPw"), partnerKey: marker("trPartner") } }),
    make("dbx", { type: "databricks", databricksConnection: { host: "d", path: "/p", token: marker("dbToken"), oauthClientSecret: marker("dbOauth") } }),
    make("my", { type: "mysql", mysqlConnection: { host: "m", password: marker("myPw") } }),
    make("md", { type: "motherduck", motherduckConnection: { accessToken: marker("mdToken") } }),
    make("dl", {
      type: "ducklake",
      ducklakeConnection: {
        storage: { bucketUrl: "s3://b", s3Connection: { accessKeyId: "k", secretAccessKey: marker("dlS3"), region: "us-east-1" }, gcsConnection: { keyId: "k", secret: marker("dlGcs") } },
        catalog: { postgresConnection: { host: "c", password: marker("dlCat") } }
      }
    }),
    make("pub", { type: "publisher", publisherConnection: { connectionUri: "https://p", accessToken: marker("pubToken") } })
  ]
}

const logs: Array<string> = []
const capture = Logger.layer([Logger.make((options) => {
  logs.push(JSON.stringify({ message: options.message, annotations: options.fiber.getRef(References.CurrentLogAnnotations) }))
})])

const acceptance = <E>(label: string, storage: Layer.Layer<Repositories | SqlClient, E>) =>
  layer(Layer.merge(storage, capture), { timeout: 120_000 })(`storage acceptance: ${label}`, (it) => {
    it.effect("no secret is stored in plaintext in any column of any table, nor logged", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        const records = [{ ...connection(organization, "all"), settings: allSecrets("all") }, ...others(organization)]
        yield* Effect.forEach(records, (r) => repo.insert(r).pipe(Effect.tap(Effect.logDebug("stored connection", r.settings.name))))
        const read = yield* repo.get({ organization, environment: "prod", name: "all" })
        assert.deepStrictEqual(read.settings, records[0]?.settings)
        const updated = yield* repo.save({ ...read, updatedAt: DateTime.makeUnsafe("2026-03-01T00:00:00Z") })
        assert.strictEqual(updated.revision, 1)

        // Every column of every table, as text.
        const sql = yield* SqlClient
        const tables = yield* sql<{ readonly table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
        assert.isAbove(tables.length, 10)
        const dump: Array<string> = []
        for (const { table_name } of tables) {
          const rows = yield* sql.unsafe<{ readonly t: string }>(`SELECT t::text AS t FROM "${table_name}" t`)
          dump.push(...rows.map((r) => r.t))
        }
        const everything = dump.join("\n")
        // The test is real: the rows are there, sealed.
        assert.include(everything, "s3://b")
        assert.notInclude(everything, "MARKER-")
        assert.notInclude(logs.join("\n"), "MARKER-")
      }).pipe(Effect.provideService(References.MinimumLogLevel, "All")))

    it.effect("50 concurrent updates of one connection: none lost silently, final state is one of them", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* ConnectionRepo.ConnectionRepo
        const ref = { organization, environment: "prod", name: "hot" }
        yield* repo.insert(connection(organization, "hot"))
        let conflicts = 0
        // Each writer reads, changes, saves; on CONFLICT it reads again and retries.
        const write = (i: number) =>
          Effect.gen(function*() {
            const current = yield* repo.get(ref)
            return yield* repo.save({ ...current, settings: { ...current.settings, postgresConnection: { host: `host-${i}`, password: `pw-${i}` } } })
          }).pipe(
            Effect.tapError((e) => Effect.sync(() => { if (e.code === "CONFLICT") conflicts++ })),
            Effect.retry({ while: (e) => e.code === "CONFLICT", times: 500 })
          )
        yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), write, { concurrency: "unbounded" })
        const final = yield* repo.get(ref)
        assert.strictEqual(final.revision, 50)
        const host = final.settings.postgresConnection?.host ?? ""
        const i = Number(host.replace("host-", ""))
        assert.isTrue(Number.isInteger(i) && i >= 0 && i < 50, host)
        assert.strictEqual(final.settings.postgresConnection?.password, `pw-${i}`)
        assert.isAbove(conflicts, 0)
      }))

    it.effect("20 concurrent attempts to arm versions of one package: exactly one armed", () =>
      Effect.gen(function*() {
        const { organization } = yield* scaffold
        const repo = yield* VersionRepo.VersionRepo
        const ids = Array.from({ length: 20 }, (_, i) => `1.0.${i}`)
        const inserted = yield* Effect.forEach(ids, (id) => repo.insert(version(organization, id)))
        const results = yield* Effect.forEach(inserted, (v) => Effect.result(repo.save({ ...v, promoteWhenReady: true })), { concurrency: "unbounded" })
        const won = results.filter((r) => r._tag === "Success")
        assert.strictEqual(won.length, 1)
        for (const r of results) if (r._tag === "Failure") assert.instanceOf(r.failure, Errors.Conflict)
        const armed = (yield* repo.list({ organization, environment: "prod", package: "sales" })).filter((v) => v.promoteWhenReady)
        assert.strictEqual(armed.length, 1)
      }))
  })

describe("storage acceptance", () => {
  acceptance("PGlite", storageOn(pgliteClient))
  if (serverUrl !== undefined) acceptance("PostgreSQL server", storageOn(serverClient(serverUrl)))
})

