/**
 * A connection's fingerprint: an opaque, stable hash of the settings that decide
 * which data the connection reaches. Credentials never enter it, so rotating a
 * password, token or key leaves it unchanged; pointing at another host, database,
 * bucket or catalog changes it. A fingerprint the caller provides is used verbatim.
 */
import type { AttachedDatabase, ConnectionSettings, PostgresConnection, S3Connection } from "./Connection.ts"
import { canonicalJson, sha256Hex } from "./internal/sha256.ts"

const defaultPorts = { postgres: 5432, mysql: 3306, trino: 8080 } as const

const lower = (value: string | undefined) => value?.trim().toLowerCase()

// The target of a PostgreSQL connection: host, port, database. A connection string is
// a secret (it may embed a password), so only its target parts are taken from it.
const postgresTarget = (pg: PostgresConnection | undefined) => {
  if (pg === undefined) return undefined
  if (pg.connectionString !== undefined && pg.connectionString.trim() !== "") {
    try {
      const url = new URL(pg.connectionString)
      return {
        host: lower(decodeURIComponent(url.hostname)),
        port: url.port === "" ? defaultPorts.postgres : Number(url.port),
        database: decodeURIComponent(url.pathname.replace(/^\//, ""))
      }
    } catch {
      return { unparsable: true }
    }
  }
  return { host: lower(pg.host), port: pg.port ?? defaultPorts.postgres, database: pg.databaseName }
}

const s3Target = (s3: S3Connection | undefined) => s3 === undefined ? undefined : { endpoint: lower(s3.endpoint), region: s3.region }

// A URL without its query string: a SAS URL's signature is a credential, its path is the data.
const withoutQuery = (value: string | undefined) => {
  if (value === undefined) return undefined
  try {
    const url = new URL(value)
    return `${url.protocol}//${url.host}${url.pathname}`
  } catch {
    return value.split("?")[0]
  }
}

const attachedTarget = (db: AttachedDatabase) => ({
  name: db.name,
  type: db.type,
  bigquery: db.bigqueryConnection === undefined ? undefined : {
    project: db.bigqueryConnection.defaultProjectId,
    location: db.bigqueryConnection.location
  },
  snowflake: db.snowflakeConnection === undefined ? undefined : {
    account: lower(db.snowflakeConnection.account),
    database: db.snowflakeConnection.database,
    schema: db.snowflakeConnection.schema
  },
  postgres: postgresTarget(db.postgresConnection),
  s3: s3Target(db.s3Connection),
  gcs: db.gcsConnection === undefined ? undefined : {},
  azure: db.azureConnection === undefined ? undefined : {
    accountName: db.azureConnection.accountName,
    url: withoutQuery(db.azureConnection.fileUrl ?? db.azureConnection.sasUrl)
  }
})

/**
 * The data-target part of a connection's settings: what `derive` hashes. Usernames,
 * roles, warehouses, timeouts and billing caps are left out: they change who asks or
 * how it is computed, not which data is reached (see docs/decisions.md).
 */
export const target = (s: ConnectionSettings): unknown => ({
  type: s.type,
  // Behind a bastion the database host is resolved from the bastion, so the bastion is part of the target.
  via: s.proxy?.ssh === undefined ? undefined : { host: lower(s.proxy.ssh.host), port: s.proxy.ssh.port },
  postgres: postgresTarget(s.postgresConnection),
  bigquery: s.bigqueryConnection === undefined ? undefined : {
    project: s.bigqueryConnection.defaultProjectId,
    location: s.bigqueryConnection.location
  },
  snowflake: s.snowflakeConnection === undefined ? undefined : {
    account: lower(s.snowflakeConnection.account),
    database: s.snowflakeConnection.database,
    schema: s.snowflakeConnection.schema
  },
  trino: s.trinoConnection === undefined ? undefined : {
    server: lower(s.trinoConnection.server),
    port: s.trinoConnection.port ?? defaultPorts.trino,
    catalog: s.trinoConnection.catalog,
    schema: s.trinoConnection.schema
  },
  databricks: s.databricksConnection === undefined ? undefined : {
    host: lower(s.databricksConnection.host),
    catalog: s.databricksConnection.defaultCatalog,
    schema: s.databricksConnection.defaultSchema,
    setupSQL: s.databricksConnection.setupSQL
  },
  mysql: s.mysqlConnection === undefined ? undefined : {
    host: lower(s.mysqlConnection.host),
    port: s.mysqlConnection.port ?? defaultPorts.mysql,
    database: s.mysqlConnection.database
  },
  duckdb: s.duckdbConnection === undefined ? undefined : {
    attached: [...(s.duckdbConnection.attachedDatabases ?? [])]
      .map(attachedTarget)
      .sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""))
  },
  motherduck: s.motherduckConnection === undefined ? undefined : { database: s.motherduckConnection.database },
  ducklake: s.ducklakeConnection === undefined ? undefined : {
    bucket: s.ducklakeConnection.storage?.bucketUrl,
    s3: s3Target(s.ducklakeConnection.storage?.s3Connection),
    catalog: postgresTarget(s.ducklakeConnection.catalog?.postgresConnection)
  },
  publisher: s.publisherConnection === undefined ? undefined : { uri: s.publisherConnection.connectionUri }
})

/** The fingerprint derived from a connection's settings: `sha256:` and 64 hex digits. */
export const derive = (settings: ConnectionSettings): string => `sha256:${sha256Hex(canonicalJson(target(settings)))}`

/** The effective fingerprint: the provided one verbatim, else the derived one. */
export const of = (settings: ConnectionSettings): string => settings.fingerprint ?? derive(settings)
