import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"
import { Connection, WriteOnly } from "@modelgate/core"

// Every secret field of every settings object, each set to a unique marker.
const full = (marker: (name: string) => string): Connection.ConnectionSettings => ({
  name: "all",
  type: "duckdb",
  excludeAllTables: false,
  proxy: { type: "ssh", ssh: { host: "b", port: 22, username: "u", privateKey: marker("sshKey"), privateKeyPass: marker("sshPass") } },
  postgresConnection: { host: "h", password: marker("pgPw"), connectionString: marker("pgConn") },
  bigqueryConnection: { defaultProjectId: "p", serviceAccountKeyJson: marker("bqKey") },
  snowflakeConnection: { account: "a", password: marker("sfPw"), privateKey: marker("sfKey"), privateKeyPass: marker("sfPass") },
  trinoConnection: { server: "https://t", password: marker("trPw"), partnerKey: marker("trPartner") },
  databricksConnection: { host: "d", token: marker("dbToken"), oauthClientSecret: marker("dbOauth") },
  mysqlConnection: { host: "m", password: marker("myPw") },
  duckdbConnection: {
    attachedDatabases: [
      { name: "a1", type: "s3", s3Connection: { accessKeyId: "k", secretAccessKey: marker("s3Secret"), sessionToken: marker("s3Session"), region: "us-east-1" } },
      { name: "a2", type: "gcs", gcsConnection: { keyId: "k", secret: marker("gcsSecret") } },
      { name: "a3", type: "azure", azureConnection: { authType: "sas_token", sasUrl: marker("azSas"), clientSecret: marker("azClient") } },
      { name: "a4", type: "postgres", postgresConnection: { host: "x", password: marker("attPgPw") } },
      { name: "a5", type: "snowflake", snowflakeConnection: { privateKey: marker("attSfKey") } },
      { name: "a6", type: "bigquery", bigqueryConnection: { serviceAccountKeyJson: marker("attBq") } }
    ]
  },
  motherduckConnection: { accessToken: marker("mdToken") },
  ducklakeConnection: {
    storage: { bucketUrl: "s3://b", s3Connection: { accessKeyId: "k", secretAccessKey: marker("dlS3"), region: "us-east-1" }, gcsConnection: { keyId: "k", secret: marker("dlGcs") } },
    catalog: { postgresConnection: { host: "c", password: marker("dlCat") } }
  },
  publisherConnection: { connectionUri: "https://p", accessToken: marker("pubToken") }
})

const secretFieldCount = 26

describe("WriteOnly", () => {
  it("finds every secret field of every settings object", () => {
    const secrets = WriteOnly.collectSecrets(Connection.ConnectionSettings, full((n) => `MARK-${n}`))
    assert.strictEqual(secrets.length, secretFieldCount)
    assert.isTrue(secrets.every((s) => s.value.startsWith("MARK-")))
    assert.deepInclude(secrets, { path: ["duckdbConnection", "attachedDatabases", 2, "azureConnection", "sasUrl"], value: "MARK-azSas" })
  })

  it("produces a read view without any secret, keeping everything else", () => {
    const value = full((n) => `MARK-${n}`)
    const view = WriteOnly.readView(Connection.ConnectionSettings, value)
    assert.notInclude(JSON.stringify(view), "MARK-")
    assert.strictEqual(view.postgresConnection?.host, "h")
    assert.strictEqual(view.duckdbConnection?.attachedDatabases?.length, 6)
    assert.strictEqual(view.proxy?.ssh?.username, "u")
  })

  it("drops write-only non-secret fields (template) from reads", () => {
    const input = Schema.decodeUnknownSync(Connection.ConnectionInput)({ name: "x", template: "bq_demo" })
    assert.notProperty(WriteOnly.readView(Connection.ConnectionInput, input), "template")
  })

  it("maps every secret and only secrets (property)", () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s.trim() !== ""), (salt) => {
      const value = full((n) => `${salt}:${n}`)
      const mapped = WriteOnly.mapSecrets(Connection.ConnectionSettings, value, (s) => `enc(${s})`)
      const secrets = WriteOnly.collectSecrets(Connection.ConnectionSettings, mapped)
      assert.strictEqual(secrets.length, secretFieldCount)
      assert.isTrue(secrets.every((s) => s.value.startsWith("enc(") && s.value.endsWith(")")))
      const back = WriteOnly.mapSecrets(Connection.ConnectionSettings, mapped, (s) => s.slice(4, -1))
      assert.deepStrictEqual(back, value)
    }))
  })

  it("treats empty and whitespace-only values as blank", () => {
    assert.isTrue(WriteOnly.isBlank(undefined))
    assert.isTrue(WriteOnly.isBlank(""))
    assert.isTrue(WriteOnly.isBlank(" \t"))
    assert.isFalse(WriteOnly.isBlank("x"))
  })
})
