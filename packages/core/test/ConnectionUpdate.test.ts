import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { Connection, ConnectionUpdate, Fingerprint } from "@modelgate/core"

type Settings = Connection.ConnectionSettings
type Input = Connection.ConnectionInput

const decodeInput = Schema.decodeUnknownSync(Connection.ConnectionInput)

const pgStored: Settings = {
  name: "warehouse",
  type: "postgres",
  excludeAllTables: false,
  proxy: {
    type: "ssh",
    ssh: { host: "bastion.example.com", port: 22, username: "tunnel", privateKey: "KEY-1", privateKeyPass: "PASS-1" }
  },
  postgresConnection: { host: "db.internal", port: 5432, databaseName: "sales", userName: "reader", password: "PW-1", sslmode: "verify-ca" },
  includeTables: ["public.*"]
}

const runUpdate = (stored: Settings, input: unknown) => Effect.runSyncExit(ConnectionUpdate.update(stored, decodeInput(input)))
const ok = (exit: Exit.Exit<Settings, unknown>): Settings => {
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(`expected success, got ${JSON.stringify(exit.cause)}`)
}
const failure = (exit: Exit.Exit<Settings, { readonly message: string; readonly code: string }>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = Exit.findErrorOption(exit)
  if (error._tag === "None") throw new Error("expected a typed failure")
  return error.value
}

describe("ConnectionUpdate.update", () => {
  it("replaces every field: an omitted optional field is cleared", () => {
    const next = ok(runUpdate(pgStored, {
      type: "postgres",
      postgresConnection: { host: "db2.internal", databaseName: "sales", userName: "reader" }
    }))
    assert.isUndefined(next.proxy)
    assert.isUndefined(next.includeTables)
    assert.isUndefined(next.postgresConnection?.port)
    assert.strictEqual(next.postgresConnection?.host, "db2.internal")
  })

  it("keeps a stored secret when the submitted one is blank or absent", () => {
    for (const password of [undefined, "", "   "]) {
      const next = ok(runUpdate(pgStored, {
        type: "postgres",
        proxy: { type: "ssh", ssh: { host: "bastion.example.com", username: "tunnel" } },
        postgresConnection: { host: "db.internal", ...(password === undefined ? {} : { password }) }
      }))
      assert.strictEqual(next.postgresConnection?.password, "PW-1")
      assert.strictEqual(next.proxy?.ssh?.privateKey, "KEY-1")
      assert.strictEqual(next.proxy?.ssh?.privateKeyPass, "PASS-1")
    }
  })

  it("replaces a secret that is sent", () => {
    const next = ok(runUpdate(pgStored, {
      type: "postgres",
      postgresConnection: { host: "db.internal", password: "PW-2" }
    }))
    assert.strictEqual(next.postgresConnection?.password, "PW-2")
  })

  it("does not keep the passphrase when the private key is rotated", () => {
    const next = ok(runUpdate(pgStored, {
      type: "postgres",
      proxy: { type: "ssh", ssh: { host: "bastion.example.com", username: "tunnel", privateKey: "KEY-2" } },
      postgresConnection: { host: "db.internal" }
    }))
    assert.strictEqual(next.proxy?.ssh?.privateKey, "KEY-2")
    assert.isUndefined(next.proxy?.ssh?.privateKeyPass)
  })

  it("applies the same passphrase rule to Snowflake key-pair auth", () => {
    const stored: Settings = {
      name: "sf", type: "snowflake", excludeAllTables: false,
      snowflakeConnection: { account: "acme", username: "svc", privateKey: "SFKEY-1", privateKeyPass: "SFPASS-1" }
    }
    const kept = ok(runUpdate(stored, { type: "snowflake", snowflakeConnection: { account: "acme", username: "svc" } }))
    assert.strictEqual(kept.snowflakeConnection?.privateKeyPass, "SFPASS-1")
    const rotated = ok(runUpdate(stored, { type: "snowflake", snowflakeConnection: { account: "acme", username: "svc", privateKey: "SFKEY-2" } }))
    assert.isUndefined(rotated.snowflakeConnection?.privateKeyPass)
    const both = ok(runUpdate(stored, {
      type: "snowflake", snowflakeConnection: { account: "acme", username: "svc", privateKey: "SFKEY-2", privateKeyPass: "SFPASS-2" }
    }))
    assert.strictEqual(both.snowflakeConnection?.privateKeyPass, "SFPASS-2")
  })

  it("matches attached databases by name, not position", () => {
    const stored: Settings = {
      name: "lake", type: "duckdb", excludeAllTables: false,
      duckdbConnection: {
        attachedDatabases: [
          { name: "pg", type: "postgres", postgresConnection: { host: "pg.internal", password: "PG-PW" } },
          { name: "s3", type: "s3", s3Connection: { accessKeyId: "AK", secretAccessKey: "S3-SECRET", region: "eu-west-1" } }
        ]
      }
    }
    const next = ok(runUpdate(stored, {
      type: "duckdb",
      duckdbConnection: {
        attachedDatabases: [
          { name: "s3", type: "s3", s3Connection: { accessKeyId: "AK", region: "eu-west-1" } },
          { name: "pg2", type: "postgres", postgresConnection: { host: "pg.internal", password: "PG2-PW" } },
          { name: "pg", type: "postgres", postgresConnection: { host: "pg.internal" } }
        ]
      }
    }))
    const byName = new Map(next.duckdbConnection?.attachedDatabases?.map((db) => [db.name, db]))
    assert.strictEqual(byName.get("s3")?.s3Connection?.secretAccessKey, "S3-SECRET")
    assert.strictEqual(byName.get("pg")?.postgresConnection?.password, "PG-PW")
    assert.strictEqual(byName.get("pg2")?.postgresConnection?.password, "PG2-PW")
  })

  it("does not carry a secret into another type's settings", () => {
    const exit = runUpdate(pgStored, { type: "mysql", mysqlConnection: { host: "db.internal" } })
    const next = ok(exit)
    assert.isUndefined(next.mysqlConnection?.password)
    assert.isUndefined(next.postgresConnection)
  })

  it("ignores read-only fields sent back from a read", () => {
    const next = ok(runUpdate(pgStored, {
      resource: "organizations/o/environments/e/connections/warehouse",
      name: "warehouse",
      type: "postgres",
      attributes: { dialectName: "postgres", isPool: true, canPersist: true, canStream: true },
      indexingStatus: "INDEXED",
      indexingStatusLastUpdated: "2026-01-01T00:00:00Z",
      indexingProgress: null,
      postgresConnection: { host: "db.internal" }
    }))
    assert.deepStrictEqual(Object.keys(next).sort(), ["excludeAllTables", "name", "postgresConnection", "type"])
  })

  it("rejects template, a rename, and a missing type", () => {
    assert.match(failure(runUpdate(pgStored, { template: "bq_demo", type: "bigquery" })).message, /template can only be given when creating/)
    assert.match(failure(runUpdate(pgStored, { name: "other", type: "postgres", postgresConnection: { host: "h" } })).message, /cannot be renamed/)
    assert.match(failure(runUpdate(pgStored, { postgresConnection: { host: "h" } })).message, /type is required/)
  })

  it("validates after keeping secrets: a required secret may be kept, not dropped", () => {
    const stored: Settings = {
      name: "s", type: "ducklake", excludeAllTables: false,
      ducklakeConnection: {
        storage: { bucketUrl: "s3://lake/data", s3Connection: { accessKeyId: "AK", secretAccessKey: "SK", region: "us-east-1" } },
        catalog: { postgresConnection: { host: "cat.internal", password: "CAT" } }
      }
    }
    const next = ok(runUpdate(stored, {
      type: "ducklake",
      ducklakeConnection: {
        storage: { bucketUrl: "s3://lake/data", s3Connection: { accessKeyId: "AK" } },
        catalog: { postgresConnection: { host: "cat.internal" } }
      }
    }))
    assert.strictEqual(next.ducklakeConnection?.storage?.s3Connection?.secretAccessKey, "SK")
    assert.strictEqual(next.ducklakeConnection?.catalog?.postgresConnection?.password, "CAT")
  })

  it("pins a provided fingerprint verbatim, but not one sent back from a read", () => {
    const derived = ok(runUpdate(pgStored, { type: "postgres", postgresConnection: { host: "db.internal" }, fingerprint: "fp-custom" }))
    assert.strictEqual(derived.fingerprint, "fp-custom")
    const storedDerived = { ...pgStored }
    const echoed = ok(runUpdate(storedDerived, {
      type: "postgres",
      fingerprint: Fingerprint.of(storedDerived),
      postgresConnection: { host: "db2.internal" },
      proxy: { type: "ssh", ssh: { host: "bastion.example.com", username: "tunnel" } }
    }))
    assert.isUndefined(echoed.fingerprint)
  })
})

describe("ConnectionUpdate.create", () => {
  const templates: ConnectionUpdate.Templates = {
    bq_demo: {
      type: "bigquery", excludeAllTables: false,
      bigqueryConnection: { defaultProjectId: "demo-project", serviceAccountKeyJson: "{\"type\":\"service_account\"}" }
    }
  }
  const create = (input: unknown) => Effect.runSyncExit(ConnectionUpdate.create(decodeInput(input), templates))

  it("fills type, configuration and credentials from a template, ignoring request credentials and tables", () => {
    const made = ok(create({
      template: "bq_demo",
      type: "postgres",
      bigqueryConnection: { defaultProjectId: "mine", serviceAccountKeyJson: "{\"stolen\":true}" },
      includeTables: ["x.y"]
    }))
    assert.strictEqual(made.name, "bq_demo")
    assert.strictEqual(made.type, "bigquery")
    assert.strictEqual(made.bigqueryConnection?.defaultProjectId, "demo-project")
    assert.isUndefined(made.includeTables)
    assert.notProperty(made, "template")
  })

  it("keeps the name given with a template", () => {
    assert.strictEqual(ok(create({ template: "bq_demo", name: "samples" })).name, "samples")
  })

  it("fails for a template the server does not offer", () => {
    const exit = Effect.runSyncExit(ConnectionUpdate.create(decodeInput({ template: "bq_demo" }), {}))
    assert.match(failure(exit).message, /not available/)
  })

  it("requires name and type without a template", () => {
    assert.match(failure(create({ type: "postgres", postgresConnection: { host: "h" } })).message, /name is required/)
    assert.match(failure(create({ name: "n", postgresConnection: { host: "h" } })).message, /type is required/)
  })

  it("applies schema defaults: SSH port 22, S3 region us-east-1, excludeAllTables false", () => {
    const made = ok(create({
      name: "d", type: "duckdb",
      proxy: { type: "ssh", ssh: { host: "b", username: "u", privateKey: "K" } },
      duckdbConnection: { attachedDatabases: [{ name: "s", type: "s3", s3Connection: { accessKeyId: "a", secretAccessKey: "b" } }] }
    }))
    assert.strictEqual(made.proxy?.ssh?.port, 22)
    assert.strictEqual(made.duckdbConnection?.attachedDatabases?.[0]?.s3Connection?.region, "us-east-1")
    assert.strictEqual(made.excludeAllTables, false)
  })
})

// --- properties -------------------------------------------------------------------------

const secretValue = fc.oneof(fc.constant(undefined), fc.constant(""), fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== ""))
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/)

const pgInput = fc.record({
  host: word,
  port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  databaseName: fc.option(word, { nil: undefined }),
  userName: fc.option(word, { nil: undefined }),
  password: secretValue,
  key: secretValue,
  pass: secretValue,
  proxied: fc.boolean()
})

type PgInput = typeof pgInput extends fc.Arbitrary<infer A> ? A : never

const toInput = (x: PgInput): Input => decodeInput(JSON.parse(JSON.stringify({
  name: "c",
  type: "postgres",
  ...(x.proxied ? { proxy: { type: "ssh", ssh: { host: "bastion", username: "u", privateKey: x.key, privateKeyPass: x.pass } } } : {}),
  postgresConnection: { host: x.host, port: x.port, databaseName: x.databaseName, userName: x.userName, password: x.password }
})))

const nonBlank = (value: string | undefined) => value !== undefined && value.trim() !== ""

describe("ConnectionUpdate properties", () => {
  const storedArb = pgInput.map((x): Settings => ({
    name: "c",
    type: "postgres",
    excludeAllTables: false,
    proxy: { type: "ssh", ssh: { host: "bastion", port: 22, username: "u", privateKey: "STORED-KEY", privateKeyPass: "STORED-PASS" } },
    postgresConnection: { host: x.host, port: 5432, password: "STORED-PW" }
  }))

  it("sent fields win, blank secrets keep stored ones, the passphrase follows its key", () => {
    fc.assert(fc.property(storedArb, pgInput, (stored, sent) => {
      const exit = Effect.runSyncExit(ConnectionUpdate.update(stored, toInput(sent)))
      // The only way to fail here: a proxied connection whose key is gone cannot be built.
      if (Exit.isFailure(exit)) return
      const next = exit.value
      assert.strictEqual(next.postgresConnection?.host, sent.host)
      assert.strictEqual(next.postgresConnection?.port, sent.port)
      assert.strictEqual(next.postgresConnection?.databaseName, sent.databaseName)
      assert.strictEqual(next.postgresConnection?.userName, sent.userName)
      assert.strictEqual(next.postgresConnection?.password, nonBlank(sent.password) ? sent.password : "STORED-PW")
      if (!sent.proxied) {
        assert.isUndefined(next.proxy)
        return
      }
      const keyKept = !nonBlank(sent.key)
      assert.strictEqual(next.proxy?.ssh?.privateKey, keyKept ? "STORED-KEY" : sent.key)
      const expectedPass = nonBlank(sent.pass) ? sent.pass : keyKept ? "STORED-PASS" : undefined
      assert.strictEqual(next.proxy?.ssh?.privateKeyPass, expectedPass)
      assert.strictEqual(next.postgresConnection?.sslmode, "no-verify")
    }))
  })

  it("is idempotent: sending the same body twice gives the same connection", () => {
    fc.assert(fc.property(storedArb, pgInput, (stored, sent) => {
      const once = Effect.runSyncExit(ConnectionUpdate.update(stored, toInput(sent)))
      if (Exit.isFailure(once)) return
      const twice = Effect.runSyncExit(ConnectionUpdate.update(once.value, toInput(sent)))
      assert.isTrue(Exit.isSuccess(twice))
      if (Exit.isSuccess(twice)) assert.deepStrictEqual(twice.value, once.value)
    }))
  })
})

describe("ConnectionUpdate: switching from a connection string to parameters", () => {
  it("does not keep the stored connection string once host is sent", () => {
    const stored: Settings = { name: "c", type: "postgres", excludeAllTables: false, postgresConnection: { connectionString: "postgres://u:p@h/db" } }
    const switched = ok(runUpdate(stored, { type: "postgres", postgresConnection: { host: "h2", password: "p2" } }))
    assert.isUndefined(switched.postgresConnection?.connectionString)
    assert.strictEqual(switched.postgresConnection?.host, "h2")
    const kept = ok(runUpdate(stored, { type: "postgres", postgresConnection: {} }))
    assert.strictEqual(kept.postgresConnection?.connectionString, "postgres://u:p@h/db")
  })
})
