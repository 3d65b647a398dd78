import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { type Connection, Fingerprint } from "@modelgate/core"
import { sha256Hex } from "../src/internal/sha256.ts"

type Settings = Connection.ConnectionSettings

const base: Settings = {
  name: "c",
  type: "postgres",
  excludeAllTables: false,
  proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: "tunnel", privateKey: "K", privateKeyPass: "P" } },
  postgresConnection: { host: "db.internal", port: 5432, databaseName: "sales", userName: "reader", password: "pw" }
}

describe("sha256", () => {
  it("matches the FIPS 180-4 test vectors", () => {
    assert.strictEqual(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    assert.strictEqual(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.strictEqual(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
    assert.strictEqual(sha256Hex("a".repeat(1000)), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
  })
})

describe("Fingerprint", () => {
  it("is stable and shaped sha256:<64 hex>", () => {
    assert.strictEqual(Fingerprint.derive(base), Fingerprint.derive({ ...base }))
    assert.match(Fingerprint.derive(base), /^sha256:[0-9a-f]{64}$/)
  })

  it("uses a provided fingerprint verbatim", () => {
    assert.strictEqual(Fingerprint.of({ ...base, fingerprint: "opaque-123" }), "opaque-123")
    assert.strictEqual(Fingerprint.of(base), Fingerprint.derive(base))
  })

  it("treats an omitted default port like the default port", () => {
    const { port: _port, ...noPort } = base.postgresConnection ?? {}
    assert.strictEqual(Fingerprint.derive({ ...base, postgresConnection: noPort }), Fingerprint.derive(base))
  })

  it("reads the target out of a connection string, never its credentials", () => {
    const a: Settings = { name: "c", type: "postgres", excludeAllTables: false, postgresConnection: { connectionString: "postgres://u:one@db.internal:5432/sales" } }
    const b: Settings = { ...a, postgresConnection: { connectionString: "postgresql://other:two@DB.internal/sales?sslmode=require" } }
    const c: Settings = { ...a, postgresConnection: { connectionString: "postgres://u:one@db.internal:5432/finance" } }
    assert.strictEqual(Fingerprint.derive(a), Fingerprint.derive(b))
    assert.notStrictEqual(Fingerprint.derive(a), Fingerprint.derive(c))
  })

  const credentialChanges: ReadonlyArray<[string, (s: Settings, v: string) => Settings]> = [
    ["password", (s, v) => ({ ...s, postgresConnection: { ...s.postgresConnection, password: v } })],
    ["userName", (s, v) => ({ ...s, postgresConnection: { ...s.postgresConnection, userName: v } })],
    ["ssh privateKey", (s, v) => ({ ...s, proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: "tunnel", privateKey: v } } })],
    ["ssh username", (s, v) => ({ ...s, proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: v, privateKey: "K" } } })],
    ["table scope", (s, v) => ({ ...s, includeTables: [`${v}.*`] })]
  ]

  const targetChanges: ReadonlyArray<[string, (s: Settings, v: string) => Settings]> = [
    ["host", (s, v) => ({ ...s, postgresConnection: { ...s.postgresConnection, host: `${v}.example` } })],
    ["database", (s, v) => ({ ...s, postgresConnection: { ...s.postgresConnection, databaseName: `db_${v}` } })],
    ["bastion", (s, v) => ({ ...s, proxy: { type: "ssh", ssh: { host: `${v}.bastion`, port: 22, username: "tunnel", privateKey: "K" } } })]
  ]

  const token = fc.stringMatching(/^[a-z0-9]{1,10}$/)

  for (const [field, change] of credentialChanges) {
    it(`is unchanged when ${field} changes (property)`, () => {
      fc.assert(fc.property(token, (v) => Fingerprint.derive(change(base, v)) === Fingerprint.derive(base)))
    })
  }

  for (const [field, change] of targetChanges) {
    it(`changes when the ${field} changes (property)`, () => {
      fc.assert(fc.property(token, token, (v, w) => {
        const a = Fingerprint.derive(change(base, v))
        const b = Fingerprint.derive(change(base, w))
        return (v === w) === (a === b)
      }))
    })
  }

  it("separates types and targets across settings objects", () => {
    const mysql: Settings = { name: "c", type: "mysql", excludeAllTables: false, mysqlConnection: { host: "db.internal", database: "sales" } }
    const rotated: Settings = { ...mysql, mysqlConnection: { host: "db.internal", database: "sales", user: "x", password: "y" } }
    assert.strictEqual(Fingerprint.derive(mysql), Fingerprint.derive(rotated))
    assert.notStrictEqual(Fingerprint.derive(mysql), Fingerprint.derive(base))
    const bq: Settings = { name: "b", type: "bigquery", excludeAllTables: false, bigqueryConnection: { defaultProjectId: "p1", serviceAccountKeyJson: "{}" } }
    assert.strictEqual(Fingerprint.derive(bq), Fingerprint.derive({ ...bq, bigqueryConnection: { defaultProjectId: "p1", serviceAccountKeyJson: "{\"k\":1}", maximumBytesBilled: "10" } }))
    assert.notStrictEqual(Fingerprint.derive(bq), Fingerprint.derive({ ...bq, bigqueryConnection: { defaultProjectId: "p2" } }))
  })

  it("ignores the order of attached databases and the SAS signature", () => {
    const a: Settings = {
      name: "d", type: "duckdb", excludeAllTables: false,
      duckdbConnection: {
        attachedDatabases: [
          { name: "x", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "https://acct.blob.core.windows.net/c/*.parquet?sig=ONE" } },
          { name: "y", type: "s3", s3Connection: { accessKeyId: "a", secretAccessKey: "b", region: "us-east-1" } }
        ]
      }
    }
    const reordered: Settings = {
      ...a,
      duckdbConnection: {
        attachedDatabases: [
          { name: "y", type: "s3", s3Connection: { accessKeyId: "c", secretAccessKey: "d", region: "us-east-1" } },
          { name: "x", type: "azure", azureConnection: { authType: "sas_token", sasUrl: "https://acct.blob.core.windows.net/c/*.parquet?sig=TWO" } }
        ]
      }
    }
    assert.strictEqual(Fingerprint.derive(a), Fingerprint.derive(reordered))
  })
})
