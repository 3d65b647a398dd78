import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Connection, ConnectionRules } from "@modelgate/core"

const settings = (value: unknown): Connection.ConnectionSettings => Schema.decodeUnknownSync(Connection.ConnectionSettings)(value)
const problems = (value: unknown) => ConnectionRules.check(ConnectionRules.normalize(settings(value))).map((p) => `${p.path} ${p.message}`)
const hasProblem = (value: unknown, pattern: RegExp) => {
  const found = problems(value)
  assert.isTrue(found.some((p) => pattern.test(p)), `expected a problem matching ${pattern}, got ${JSON.stringify(found)}`)
}
const valid = (value: unknown) => assert.deepStrictEqual(problems(value), [])

const proxy = { type: "ssh", ssh: { host: "bastion", username: "u", privateKey: "K" } }

describe("ConnectionRules: settings object by type", () => {
  it("requires the type's own settings object, except duckdb", () => {
    hasProblem({ name: "c", type: "postgres" }, /^postgresConnection is required/)
    hasProblem({ name: "c", type: "publisher" }, /^publisherConnection is required/)
    valid({ name: "c", type: "duckdb" })
  })
  it("rejects another type's settings object", () => {
    hasProblem({ name: "c", type: "postgres", postgresConnection: { host: "h" }, mysqlConnection: { host: "h" } }, /^mysqlConnection does not belong/)
  })
})

describe("ConnectionRules: sslmode", () => {
  it("is rejected on a direct connection", () => {
    hasProblem({ name: "c", type: "postgres", postgresConnection: { host: "h", sslmode: "disable" } }, /sslmode is valid only on a connection reached through a proxy/)
  })
  it("is accepted through a proxy, and defaults to no-verify there", () => {
    valid({ name: "c", type: "postgres", proxy, postgresConnection: { host: "h", sslmode: "verify-ca" } })
    const normalized = ConnectionRules.normalize(settings({ name: "c", type: "postgres", proxy, postgresConnection: { host: "h" } }))
    assert.strictEqual(normalized.postgresConnection?.sslmode, "no-verify")
  })
  it("is not defaulted on a direct connection", () => {
    const normalized = ConnectionRules.normalize(settings({ name: "c", type: "postgres", postgresConnection: { host: "h" } }))
    assert.isUndefined(normalized.postgresConnection?.sslmode)
  })
  it("applies to nested PostgreSQL settings too", () => {
    hasProblem({
      name: "c", type: "duckdb",
      duckdbConnection: { attachedDatabases: [{ name: "p", type: "postgres", postgresConnection: { host: "h", sslmode: "disable" } }] }
    }, /attachedDatabases\[0\]\.postgresConnection\.sslmode is valid only/)
  })
  it("rejects an unknown sslmode value at the schema", () => {
    assert.throws(() => settings({ name: "c", type: "postgres", proxy, postgresConnection: { host: "h", sslmode: "require" } }))
  })
})

describe("ConnectionRules: proxy", () => {
  it("defaults the SSH port to 22", () => {
    assert.strictEqual(settings({ name: "c", type: "postgres", proxy, postgresConnection: { host: "h" } }).proxy?.ssh?.port, 22)
  })
  it("requires host, username and a private key", () => {
    hasProblem({ name: "c", type: "postgres", proxy: { type: "ssh", ssh: { host: "b", username: "u" } }, postgresConnection: { host: "h" } }, /proxy\.ssh\.privateKey is required/)
    hasProblem({ name: "c", type: "postgres", proxy: { type: "ssh", ssh: { username: "u", privateKey: "K" } }, postgresConnection: { host: "h" } }, /proxy\.ssh\.host is required/)
    hasProblem({ name: "c", type: "postgres", proxy: { type: "ssh" }, postgresConnection: { host: "h" } }, /proxy\.ssh is required/)
  })
  it("accepts known_hosts lines, hashed lines and bare blobs as host keys", () => {
    const blob = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    assert.isTrue(ConnectionRules.isValidHostKey(`bastion.example.com ssh-ed25519 ${blob}`))
    assert.isTrue(ConnectionRules.isValidHostKey(`|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg= ssh-ed25519 ${blob}`))
    assert.isTrue(ConnectionRules.isValidHostKey(`[bastion]:2222,10.0.0.1 ecdsa-sha2-nistp256 ${blob}\n${blob}`))
    assert.isTrue(ConnectionRules.isValidHostKey(`@cert-authority *.example.com ssh-rsa ${blob} comment`))
    assert.isFalse(ConnectionRules.isValidHostKey(""))
    assert.isFalse(ConnectionRules.isValidHostKey("bastion not-a-key"))
    assert.isFalse(ConnectionRules.isValidHostKey("bastion ssh-ed25519 not*base64"))
    hasProblem({ name: "c", type: "postgres", proxy: { type: "ssh", ssh: { host: "b", username: "u", privateKey: "K", hostKey: "junk junk" } }, postgresConnection: { host: "h" } }, /hostKey must be/)
  })
})

describe("ConnectionRules: PostgreSQL and MySQL", () => {
  it("needs a host or a connection string, not both", () => {
    hasProblem({ name: "c", type: "postgres", postgresConnection: {} }, /postgresConnection\.host is required/)
    valid({ name: "c", type: "postgres", postgresConnection: { connectionString: "postgres://u:p@h/db" } })
    hasProblem({ name: "c", type: "postgres", postgresConnection: { connectionString: "postgres://u:p@h/db", host: "h" } }, /host cannot be combined with connectionString/)
    hasProblem({ name: "c", type: "postgres", postgresConnection: { connectionString: "mysql://h/db" } }, /connectionString must be a postgres/)
  })
  it("needs a MySQL host", () => {
    hasProblem({ name: "c", type: "mysql", mysqlConnection: { database: "d" } }, /mysqlConnection\.host is required/)
    valid({ name: "c", type: "mysql", mysqlConnection: { host: "h", database: "d", user: "root" } })
  })
})

describe("ConnectionRules: storage objects", () => {
  const attached = (db: unknown) => ({ name: "d", type: "duckdb", duckdbConnection: { attachedDatabases: [db] } })
  it("defaults the S3 region to us-east-1 and requires both S3 keys", () => {
    const s = settings(attached({ name: "s", type: "s3", s3Connection: { accessKeyId: "a", secretAccessKey: "b" } }))
    assert.strictEqual(s.duckdbConnection?.attachedDatabases?.[0]?.s3Connection?.region, "us-east-1")
    hasProblem(attached({ name: "s", type: "s3", s3Connection: { accessKeyId: "a" } }), /secretAccessKey is required/)
  })
  it("requires both GCS HMAC fields", () => {
    hasProblem(attached({ name: "g", type: "gcs", gcsConnection: { keyId: "a" } }), /gcsConnection\.secret is required/)
  })
  it("checks Azure by authType and URL scheme", () => {
    const sp = { authType: "service_principal", tenantId: "t", clientId: "c", clientSecret: "s", accountName: "a", fileUrl: "abfss://c@a.dfs.core.windows.net/**" }
    valid(attached({ name: "z", type: "azure", azureConnection: sp }))
    for (const field of ["tenantId", "clientId", "clientSecret", "accountName", "fileUrl"]) {
      const rest = Object.fromEntries(Object.entries(sp).filter(([key]) => key !== field))
      hasProblem(attached({ name: "z", type: "azure", azureConnection: rest }), new RegExp(`${field} is required for service_principal`))
    }
    hasProblem(attached({ name: "z", type: "azure", azureConnection: { ...sp, fileUrl: "ftp://x/y" } }), /fileUrl must use one of the schemes/)
    valid(attached({ name: "z", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "az://container/dir/*.parquet" } }))
    valid(attached({ name: "z", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "https://a.blob.core.windows.net/c/**?sv=1&sig=x" } }))
    hasProblem(attached({ name: "z", type: "azure", azureConnection: { authType: "sas_token" } }), /sasUrl is required for sas_token/)
    hasProblem(attached({ name: "z", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "s3://x/y" } }), /sasUrl must use one of the schemes/)
    hasProblem(attached({ name: "z", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "https://a/b", tenantId: "t" } }), /tenantId belongs to service_principal/)
    hasProblem(attached({ name: "z", type: "azure", azureConnection: {} }), /authType is required/)
  })
  it("requires name, type and the matching settings of an attached database, with unique names", () => {
    hasProblem(attached({ type: "s3", s3Connection: { accessKeyId: "a", secretAccessKey: "b" } }), /attachedDatabases\[0\]\.name is required/)
    hasProblem(attached({ name: "x", type: "s3" }), /s3Connection is required for an attached database of type s3/)
    hasProblem(attached({ name: "x", type: "s3", s3Connection: { accessKeyId: "a", secretAccessKey: "b" }, gcsConnection: { keyId: "k", secret: "s" } }), /gcsConnection does not belong/)
    const twice = { name: "d", type: "duckdb", duckdbConnection: { attachedDatabases: [
      { name: "x", type: "gcs", gcsConnection: { keyId: "k", secret: "s" } },
      { name: "x", type: "gcs", gcsConnection: { keyId: "k", secret: "s" } }
    ] } }
    hasProblem(twice, /duplicates the name x/)
  })
  it("rejects an attached database name outside the pattern", () => {
    assert.throws(() => settings(attached({ name: "1bad", type: "gcs", gcsConnection: { keyId: "k", secret: "s" } })))
  })
})

describe("ConnectionRules: DuckLake and Publisher", () => {
  const lake = {
    storage: { bucketUrl: "s3://lake/path", s3Connection: { accessKeyId: "a", secretAccessKey: "b" } },
    catalog: { postgresConnection: { host: "cat" } }
  }
  it("requires storage with a bucket URL and a PostgreSQL catalog", () => {
    valid({ name: "l", type: "ducklake", ducklakeConnection: lake })
    hasProblem({ name: "l", type: "ducklake", ducklakeConnection: { catalog: lake.catalog } }, /ducklakeConnection\.storage is required/)
    hasProblem({ name: "l", type: "ducklake", ducklakeConnection: { storage: lake.storage } }, /catalog\.postgresConnection is required/)
    hasProblem({ name: "l", type: "ducklake", ducklakeConnection: { ...lake, storage: { s3Connection: lake.storage.s3Connection } } }, /bucketUrl is required/)
    hasProblem({ name: "l", type: "ducklake", ducklakeConnection: { ...lake, storage: { ...lake.storage, bucketUrl: "https://lake" } } }, /bucketUrl must be an s3:\/\/ or gs:\/\//)
    hasProblem({ name: "l", type: "ducklake", ducklakeConnection: { ...lake, storage: { ...lake.storage, bucketUrl: "gs://lake" } } }, /s3Connection does not apply to a gs:\/\/ bucket/)
  })
  it("requires a Publisher connection URI", () => {
    valid({ name: "p", type: "publisher", publisherConnection: { connectionUri: "https://pub.example.com/api/v0/projects/x/connections/y", accessToken: "t" } })
    hasProblem({ name: "p", type: "publisher", publisherConnection: { accessToken: "t" } }, /connectionUri is required/)
    hasProblem({ name: "p", type: "publisher", publisherConnection: { connectionUri: "not a url" } }, /connectionUri must be an http\(s\) URL/)
  })
})

describe("ConnectionRules: warehouses", () => {
  it("checks Snowflake, Databricks, Trino, BigQuery and MotherDuck essentials", () => {
    hasProblem({ name: "s", type: "snowflake", snowflakeConnection: { account: "a", username: "u" } }, /password or privateKey is required/)
    valid({ name: "s", type: "snowflake", snowflakeConnection: { account: "a", username: "u", privateKey: "k" } })
    hasProblem({ name: "d", type: "databricks", databricksConnection: { host: "h", path: "/p" } }, /token or oauthClientId/)
    hasProblem({ name: "d", type: "databricks", databricksConnection: { host: "h", path: "/p", token: "t", oauthClientId: "i", oauthClientSecret: "s" } }, /cannot be combined/)
    valid({ name: "d", type: "databricks", databricksConnection: { host: "h", path: "/p", oauthClientId: "i", oauthClientSecret: "s" } })
    hasProblem({ name: "t", type: "trino", trinoConnection: { server: "trino.local" } }, /server must be an http\(s\) URL/)
    hasProblem({ name: "b", type: "bigquery", bigqueryConnection: { serviceAccountKeyJson: "not json" } }, /serviceAccountKeyJson must be/)
    hasProblem({ name: "b", type: "bigquery", bigqueryConnection: { defaultProjectId: "p", maximumBytesBilled: "ten" } }, /maximumBytesBilled must be a whole number/)
    hasProblem({ name: "m", type: "motherduck", motherduckConnection: { database: "x" } }, /accessToken is required/)
  })
})

describe("ConnectionRules: tables", () => {
  it("defaults excludeAllTables to false", () => {
    assert.strictEqual(settings({ name: "c", type: "duckdb" }).excludeAllTables, false)
  })
  it("rejects includeTables together with excludeAllTables", () => {
    hasProblem({ name: "c", type: "duckdb", excludeAllTables: true, includeTables: ["a.b"] }, /includeTables cannot list tables/)
    valid({ name: "c", type: "duckdb", excludeAllTables: true, excludeTables: ["a.*"] })
  })
  it("validates table patterns at the schema", () => {
    assert.throws(() => settings({ name: "c", type: "duckdb", includeTables: ["*.orders"] }))
  })
})

describe("ConnectionRules.validate", () => {
  it("reports every problem in one VALIDATION_ERROR", async () => {
    const { Effect, Exit } = await import("effect")
    const exit = Effect.runSyncExit(ConnectionRules.validate(settings({ name: "c", type: "postgres", postgresConnection: { sslmode: "disable" } })))
    assert.isTrue(Exit.isFailure(exit))
    const error = Exit.findErrorOption(exit)
    assert.isTrue(error._tag === "Some" && error.value.code === "VALIDATION_ERROR" && /sslmode/.test(error.value.message) && /host is required/.test(error.value.message))
  })
})
