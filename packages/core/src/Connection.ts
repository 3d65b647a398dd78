/**
 * The Connection resource of the specification: the common fields, the settings
 * object of each of the ten connection types, the SSH proxy, and the nested
 * storage objects. Write-only secrets carry the `secret` mark of `WriteOnly`, so
 * reads, updates and storage all treat them by the schema alone.
 */
import { Effect, Schema } from "effect"
import * as IndexingStatus from "./IndexingStatus.ts"
import * as Naming from "./Naming.ts"
import { secret, writeOnly } from "./WriteOnly.ts"

const optional = Schema.optionalKey

/** The ten connection types; the spec's "the service" is `databricks`. */
export const ConnectionType = Schema.Literals([
  "postgres",
  "bigquery",
  "snowflake",
  "trino",
  "databricks",
  "mysql",
  "duckdb",
  "motherduck",
  "ducklake",
  "publisher"
]).annotate({ identifier: "ConnectionType" })
/** A connection type. */
export type ConnectionType = typeof ConnectionType.Type

/** Capabilities of a connection; read-only, derived by the server from the type. */
export const ConnectionAttributes = Schema.Struct({
  dialectName: optional(Schema.String),
  isPool: optional(Schema.Boolean),
  canPersist: optional(Schema.Boolean),
  canStream: optional(Schema.Boolean)
}).annotate({ identifier: "ConnectionAttributes", readOnly: true })
/** Capabilities of a connection. */
export type ConnectionAttributes = typeof ConnectionAttributes.Type

/** SSH bastion settings; public-key authentication only. */
export const SshProxyConfig = Schema.Struct({
  host: optional(Schema.String),
  port: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 })).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(22))
  ),
  username: optional(Schema.String),
  privateKey: optional(secret({ description: "PEM-encoded private key; never returned" })),
  // A passphrase belongs to its key: on key rotation a blank passphrase is not kept.
  privateKeyPass: optional(secret({ keptWith: "privateKey", description: "Passphrase of the private key" })),
  hostKey: optional(Schema.String)
}).annotate({ identifier: "SshProxyConfig" })
/** SSH bastion settings. */
export type SshProxyConfig = typeof SshProxyConfig.Type

/** A network proxy below the driver: SSH local port forwarding. */
export const ConnectionProxy = Schema.Struct({
  type: Schema.Literal("ssh"),
  ssh: optional(SshProxyConfig)
}).annotate({ identifier: "ConnectionProxy" })
/** A network proxy. */
export type ConnectionProxy = typeof ConnectionProxy.Type

/** TLS modes of a proxied PostgreSQL connection. */
export const SslMode = Schema.Literals(["disable", "no-verify", "verify-ca"])
/** A TLS mode. */
export type SslMode = typeof SslMode.Type

const Port = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))

/** Settings for type postgres (also a DuckLake catalog or an attached database). */
export const PostgresConnection = Schema.Struct({
  host: optional(Schema.String),
  port: optional(Port),
  databaseName: optional(Schema.String),
  userName: optional(Schema.String),
  password: optional(secret()),
  // A complete connection string usually embeds the password: treated as a secret.
  // Sending `host` switches to individual parameters: the stored string is then not kept.
  connectionString: optional(secret({ replacedBy: "host", description: "Complete connection string; never returned" })),
  sslmode: optional(SslMode)
}).annotate({ identifier: "PostgresConnection" })
/** Settings for type postgres. */
export type PostgresConnection = typeof PostgresConnection.Type

/** Settings for type bigquery. */
export const BigqueryConnection = Schema.Struct({
  defaultProjectId: optional(Schema.String),
  billingProjectId: optional(Schema.String),
  location: optional(Schema.String),
  serviceAccountKeyJson: optional(secret({ description: "JSON text of service account credentials" })),
  maximumBytesBilled: optional(Schema.String),
  queryTimeoutMilliseconds: optional(Schema.String)
}).annotate({ identifier: "BigqueryConnection" })
/** Settings for type bigquery. */
export type BigqueryConnection = typeof BigqueryConnection.Type

/** Settings for type snowflake. */
export const SnowflakeConnection = Schema.Struct({
  account: optional(Schema.String),
  username: optional(Schema.String),
  password: optional(secret()),
  privateKey: optional(secret()),
  privateKeyPass: optional(secret({ keptWith: "privateKey" })),
  warehouse: optional(Schema.String),
  database: optional(Schema.String),
  schema: optional(Schema.String),
  role: optional(Schema.String),
  responseTimeoutMilliseconds: optional(Schema.Int)
}).annotate({ identifier: "SnowflakeConnection" })
/** Settings for type snowflake. */
export type SnowflakeConnection = typeof SnowflakeConnection.Type

/** Settings for type trino. */
export const TrinoConnection = Schema.Struct({
  server: optional(Schema.String),
  port: optional(Schema.Number),
  catalog: optional(Schema.String),
  schema: optional(Schema.String),
  user: optional(Schema.String),
  password: optional(secret()),
  partnerKey: optional(secret({ description: "API key for clusters hosted by a partner service" }))
}).annotate({ identifier: "TrinoConnection" })
/** Settings for type trino. */
export type TrinoConnection = typeof TrinoConnection.Type

/** Settings for type databricks (the spec's "the service"). */
export const DatabricksConnection = Schema.Struct({
  host: optional(Schema.String),
  path: optional(Schema.String),
  token: optional(secret({ description: "Personal access token" })),
  oauthClientId: optional(Schema.String),
  oauthClientSecret: optional(secret()),
  defaultCatalog: optional(Schema.String),
  defaultSchema: optional(Schema.String),
  setupSQL: optional(Schema.String)
}).annotate({ identifier: "DatabricksConnection" })
/** Settings for type databricks. */
export type DatabricksConnection = typeof DatabricksConnection.Type

/** Settings for type mysql. */
export const MysqlConnection = Schema.Struct({
  host: optional(Schema.String),
  port: optional(Port),
  database: optional(Schema.String),
  user: optional(Schema.String),
  password: optional(secret())
}).annotate({ identifier: "MysqlConnection" })
/** Settings for type mysql. */
export type MysqlConnection = typeof MysqlConnection.Type

/** S3 (or S3-compatible) credentials. */
export const S3Connection = Schema.Struct({
  accessKeyId: optional(Schema.String),
  secretAccessKey: optional(secret()),
  region: Schema.String.pipe(Schema.withDecodingDefaultKey(Effect.succeed("us-east-1"))),
  endpoint: optional(Schema.String),
  sessionToken: optional(secret({ description: "Temporary-credential token" }))
}).annotate({ identifier: "S3Connection" })
/** S3 credentials. */
export type S3Connection = typeof S3Connection.Type

/** GCS HMAC credentials. */
export const GCSConnection = Schema.Struct({
  keyId: optional(Schema.String),
  secret: optional(secret({ description: "HMAC secret" }))
}).annotate({ identifier: "GCSConnection" })
/** GCS HMAC credentials. */
export type GCSConnection = typeof GCSConnection.Type

/** Azure authentication types. */
export const AzureAuthType = Schema.Literals(["service_principal", "sas_token"])

/** Azure storage access by service principal or SAS token. */
export const AzureConnection = Schema.Struct({
  authType: optional(AzureAuthType),
  // A SAS URL carries its signature in the query string: treated as a secret.
  sasUrl: optional(secret({ description: "Full SAS URL; never returned" })),
  tenantId: optional(Schema.String),
  clientId: optional(Schema.String),
  clientSecret: optional(secret()),
  accountName: optional(Schema.String),
  fileUrl: optional(Schema.String)
}).annotate({ identifier: "AzureConnection" })
/** Azure storage access. */
export type AzureConnection = typeof AzureConnection.Type

/** Types of a database attached to a DuckDB connection. */
export const AttachedDatabaseType = Schema.Literals(["bigquery", "snowflake", "postgres", "gcs", "s3", "azure"])
/** A type of attached database. */
export type AttachedDatabaseType = typeof AttachedDatabaseType.Type

/** A database attached to a DuckDB connection. */
export const AttachedDatabase = Schema.Struct({
  name: optional(Naming.AttachedDatabaseName),
  type: optional(AttachedDatabaseType),
  attributes: optional(ConnectionAttributes),
  bigqueryConnection: optional(BigqueryConnection),
  snowflakeConnection: optional(SnowflakeConnection),
  postgresConnection: optional(PostgresConnection),
  gcsConnection: optional(GCSConnection),
  s3Connection: optional(S3Connection),
  azureConnection: optional(AzureConnection)
}).annotate({ identifier: "AttachedDatabase" })
/** A database attached to a DuckDB connection. */
export type AttachedDatabase = typeof AttachedDatabase.Type

/** Settings for type duckdb: only data-source intent; files, policy and extensions belong to the server. */
export const DuckdbConnection = Schema.Struct({
  // Attached databases are matched by name across updates, so a blank secret finds its stored twin.
  attachedDatabases: optional(Schema.Array(AttachedDatabase).annotate({ elementKey: "name" }))
}).annotate({ identifier: "DuckdbConnection" })
/** Settings for type duckdb. */
export type DuckdbConnection = typeof DuckdbConnection.Type

/** Settings for type motherduck. */
export const MotherDuckConnection = Schema.Struct({
  accessToken: optional(secret()),
  database: optional(Schema.String)
}).annotate({ identifier: "MotherDuckConnection" })
/** Settings for type motherduck. */
export type MotherDuckConnection = typeof MotherDuckConnection.Type

/** DuckLake data storage: a bucket URL and its credentials. */
export const DucklakeStorage = Schema.Struct({
  bucketUrl: optional(Schema.String),
  s3Connection: optional(S3Connection),
  gcsConnection: optional(GCSConnection)
}).annotate({ identifier: "DucklakeStorage" })

/** DuckLake metadata catalog on PostgreSQL. */
export const DucklakeCatalog = Schema.Struct({
  postgresConnection: optional(PostgresConnection)
}).annotate({ identifier: "DucklakeCatalog" })

/** Settings for type ducklake (storage and catalog both required). */
export const DucklakeConnection = Schema.Struct({
  storage: optional(DucklakeStorage),
  catalog: optional(DucklakeCatalog)
}).annotate({ identifier: "DucklakeConnection" })
/** Settings for type ducklake. */
export type DucklakeConnection = typeof DucklakeConnection.Type

/** Settings for type publisher: SQL proxied to a remote data-serving instance. */
export const PublisherConnection = Schema.Struct({
  connectionUri: optional(Schema.String),
  accessToken: optional(secret({ description: "Bearer token for the remote instance" }))
}).annotate({ identifier: "PublisherConnection" })
/** Settings for type publisher. */
export type PublisherConnection = typeof PublisherConnection.Type

/** Connection templates: a managed sample dataset. */
export const ConnectionTemplate = Schema.Literals(["bq_demo"])
/** A connection template. */
export type ConnectionTemplate = typeof ConnectionTemplate.Type

/** The settings object of each type, by its property name. */
export const settingsKeyByType = {
  postgres: "postgresConnection",
  bigquery: "bigqueryConnection",
  snowflake: "snowflakeConnection",
  trino: "trinoConnection",
  databricks: "databricksConnection",
  mysql: "mysqlConnection",
  duckdb: "duckdbConnection",
  motherduck: "motherduckConnection",
  ducklake: "ducklakeConnection",
  publisher: "publisherConnection"
} as const satisfies Record<ConnectionType, string>

/** The property name of a settings object. */
export type SettingsKey = typeof settingsKeyByType[ConnectionType]

const settingsFields = {
  postgresConnection: optional(PostgresConnection),
  bigqueryConnection: optional(BigqueryConnection),
  snowflakeConnection: optional(SnowflakeConnection),
  trinoConnection: optional(TrinoConnection),
  databricksConnection: optional(DatabricksConnection),
  mysqlConnection: optional(MysqlConnection),
  duckdbConnection: optional(DuckdbConnection),
  motherduckConnection: optional(MotherDuckConnection),
  ducklakeConnection: optional(DucklakeConnection),
  publisherConnection: optional(PublisherConnection)
}

const TableList = Schema.NullOr(Schema.Array(Naming.TableNamePattern))

/**
 * What a caller controls of a connection: identity, target, credentials and table
 * scope. This is the stored configuration; secrets are still in plaintext here and
 * are encrypted by storage.
 */
export const ConnectionSettings = Schema.Struct({
  name: Naming.Identifier,
  type: ConnectionType,
  fingerprint: optional(Schema.String),
  proxy: optional(ConnectionProxy),
  ...settingsFields,
  includeTables: optional(TableList),
  excludeAllTables: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  excludeTables: optional(TableList)
}).annotate({ identifier: "ConnectionSettings" })
/** What a caller controls of a connection. */
export type ConnectionSettings = typeof ConnectionSettings.Type

/**
 * The request body of create and update. Every field is optional at the schema
 * level (the rules check what each operation requires); read-only fields are
 * accepted so that a read can be sent back, and ignored.
 */
export const ConnectionInput = Schema.Struct({
  resource: optional(Schema.String),
  name: optional(Naming.Identifier),
  type: optional(ConnectionType),
  fingerprint: optional(Schema.String),
  attributes: optional(ConnectionAttributes),
  proxy: optional(ConnectionProxy),
  ...settingsFields,
  template: optional(writeOnly(ConnectionTemplate)),
  includeTables: optional(TableList),
  excludeAllTables: optional(Schema.Boolean),
  excludeTables: optional(TableList),
  indexingStatus: optional(Schema.NullOr(IndexingStatus.IndexingStatus)),
  indexingStatusLastUpdated: optional(Schema.NullOr(Schema.String)),
  indexingProgress: optional(Schema.NullOr(IndexingStatus.ConnectionIndexingProgress))
}).annotate({ identifier: "ConnectionInput" })
/** The request body of create and update. */
export type ConnectionInput = typeof ConnectionInput.Type

/** The Connection resource as read: settings without secrets, plus server-owned fields. */
export const Connection = Schema.Struct({
  resource: Schema.String,
  name: Naming.Identifier,
  type: ConnectionType,
  fingerprint: Schema.String,
  attributes: ConnectionAttributes,
  proxy: optional(ConnectionProxy),
  ...settingsFields,
  includeTables: optional(TableList),
  excludeAllTables: Schema.Boolean,
  excludeTables: optional(TableList),
  indexingStatus: Schema.NullOr(IndexingStatus.IndexingStatus),
  indexingStatusLastUpdated: Schema.NullOr(Schema.DateTimeUtcFromString),
  indexingProgress: Schema.NullOr(IndexingStatus.ConnectionIndexingProgress)
}).annotate({ identifier: "Connection" })
/** The Connection resource as read (secrets are never in it). */
export type Connection = typeof Connection.Type

/**
 * The capabilities of each connection type, as reads report them. DuckDB-family
 * connections cannot persist in v0 (their persist sources serve live).
 */
export const attributesByType: Record<ConnectionType, ConnectionAttributes> = {
  postgres: { dialectName: "postgres", isPool: true, canPersist: true, canStream: true },
  bigquery: { dialectName: "standardsql", isPool: false, canPersist: true, canStream: true },
  snowflake: { dialectName: "snowflake", isPool: false, canPersist: true, canStream: true },
  trino: { dialectName: "trino", isPool: false, canPersist: true, canStream: true },
  databricks: { dialectName: "databricks", isPool: false, canPersist: true, canStream: true },
  mysql: { dialectName: "mysql", isPool: true, canPersist: true, canStream: true },
  duckdb: { dialectName: "duckdb", isPool: false, canPersist: false, canStream: true },
  motherduck: { dialectName: "duckdb", isPool: false, canPersist: false, canStream: true },
  ducklake: { dialectName: "duckdb", isPool: false, canPersist: false, canStream: true },
  publisher: { dialectName: "publisher", isPool: false, canPersist: false, canStream: false }
}
