/**
 * The field rules of a connection that a schema cannot express alone: which
 * settings object each type needs, the sslmode and proxy rules, credentials
 * that must be present (after an update kept the stored ones), Azure, DuckLake
 * and Publisher requirements. `normalize` applies the server defaults; `check`
 * lists every problem at once so a caller can fix them in one round trip.
 */
import { Effect, Predicate } from "effect"
import type {
  AttachedDatabase,
  AzureConnection,
  ConnectionSettings,
  GCSConnection,
  PostgresConnection,
  S3Connection
} from "./Connection.ts"
import { settingsKeyByType } from "./Connection.ts"
import { ValidationError } from "./Errors.ts"
import { isBlank } from "./WriteOnly.ts"

/** One broken rule: where, and what is wrong. */
export interface Problem {
  readonly path: string
  readonly message: string
}

const present = (value: unknown): boolean => !isBlank(value)

const urlWithScheme = (value: string, schemes: ReadonlyArray<string>): boolean => {
  try {
    const url = new URL(value)
    return schemes.includes(url.protocol.slice(0, -1)) && url.host !== ""
  } catch {
    return false
  }
}

// A key type as written in known_hosts and authorized_keys lines.
const keyTypeRegExp = /^(ssh-(rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)$/
const base64RegExp = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * Whether a pinned host key is usable: one or more lines, each a known_hosts line
 * (plain or hashed host names, optional marker, key type, base64 blob) or a bare
 * base64 blob. Comments and blank lines are allowed.
 */
export const isValidHostKey = (hostKey: string): boolean => {
  const lines = hostKey.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))
  if (lines.length === 0) return false
  return lines.every((line) => {
    const tokens = line.split(/\s+/)
    if (tokens.length === 1) return base64RegExp.test(tokens[0] ?? "")
    const at = tokens.findIndex((t) => keyTypeRegExp.test(t))
    if (at < 0) return false
    const blob = tokens[at + 1]
    return blob !== undefined && base64RegExp.test(blob)
  })
}

/** Server-applied defaults: a proxied PostgreSQL connection without sslmode gets `no-verify`. */
export const normalize = (settings: ConnectionSettings): ConnectionSettings => {
  if (settings.proxy === undefined) return settings
  const withDefault = (pg: PostgresConnection): PostgresConnection =>
    pg.sslmode !== undefined ? pg : { ...pg, sslmode: "no-verify" }
  return {
    ...settings,
    ...(settings.postgresConnection === undefined ? {} : { postgresConnection: withDefault(settings.postgresConnection) }),
    ...(settings.ducklakeConnection?.catalog?.postgresConnection === undefined ? {} : {
      ducklakeConnection: {
        ...settings.ducklakeConnection,
        catalog: { ...settings.ducklakeConnection.catalog, postgresConnection: withDefault(settings.ducklakeConnection.catalog.postgresConnection) }
      }
    }),
    ...(settings.duckdbConnection?.attachedDatabases === undefined ? {} : {
      duckdbConnection: {
        ...settings.duckdbConnection,
        attachedDatabases: settings.duckdbConnection.attachedDatabases.map((db) =>
          db.postgresConnection === undefined ? db : { ...db, postgresConnection: withDefault(db.postgresConnection) }
        )
      }
    })
  }
}

class Problems {
  readonly list: Array<Problem> = []
  add(path: string, message: string) {
    this.list.push({ path, message })
  }
  require(path: string, value: unknown, what = "is required") {
    if (!present(value)) this.add(path, what)
  }
}

const checkPostgres = (p: Problems, path: string, pg: PostgresConnection, proxied: boolean) => {
  // sslmode is valid only through a proxy; a direct connection uses the deployment's TLS setting.
  if (pg.sslmode !== undefined && !proxied) {
    p.add(`${path}.sslmode`, "is valid only on a connection reached through a proxy; a direct connection uses the deployment's TLS setting")
  }
  if (present(pg.connectionString)) {
    if (!urlWithScheme(pg.connectionString ?? "", ["postgres", "postgresql"])) {
      p.add(`${path}.connectionString`, "must be a postgres:// or postgresql:// URL")
    }
    for (const field of ["host", "port", "databaseName", "userName"] as const) {
      if (pg[field] !== undefined) p.add(`${path}.${field}`, "cannot be combined with connectionString, which is complete")
    }
  } else {
    p.require(`${path}.host`, pg.host, "is required (or give connectionString)")
  }
}

const checkS3 = (p: Problems, path: string, s3: S3Connection) => {
  p.require(`${path}.accessKeyId`, s3.accessKeyId)
  p.require(`${path}.secretAccessKey`, s3.secretAccessKey)
  if (s3.endpoint !== undefined && !urlWithScheme(s3.endpoint, ["http", "https"])) {
    p.add(`${path}.endpoint`, "must be an http(s) URL")
  }
}

const checkGcs = (p: Problems, path: string, gcs: GCSConnection) => {
  p.require(`${path}.keyId`, gcs.keyId)
  p.require(`${path}.secret`, gcs.secret)
}

const azureSchemes = ["https", "http", "abfss", "az"]

const checkAzure = (p: Problems, path: string, az: AzureConnection) => {
  const spFields = ["tenantId", "clientId", "clientSecret", "accountName", "fileUrl"] as const
  if (az.authType === undefined) return p.add(`${path}.authType`, "is required (service_principal or sas_token)")
  if (az.authType === "sas_token") {
    p.require(`${path}.sasUrl`, az.sasUrl, "is required for sas_token")
    if (present(az.sasUrl) && !urlWithScheme(az.sasUrl ?? "", azureSchemes)) {
      p.add(`${path}.sasUrl`, "must use one of the schemes https, http, abfss, az")
    }
    for (const field of spFields) if (az[field] !== undefined) p.add(`${path}.${field}`, "belongs to service_principal, not sas_token")
  } else {
    for (const field of spFields) p.require(`${path}.${field}`, az[field], "is required for service_principal")
    if (present(az.fileUrl) && !urlWithScheme(az.fileUrl ?? "", azureSchemes)) {
      p.add(`${path}.fileUrl`, "must use one of the schemes https, http, abfss, az")
    }
    if (az.sasUrl !== undefined) p.add(`${path}.sasUrl`, "belongs to sas_token, not service_principal")
  }
}

const attachedKeyByType = {
  bigquery: "bigqueryConnection",
  snowflake: "snowflakeConnection",
  postgres: "postgresConnection",
  gcs: "gcsConnection",
  s3: "s3Connection",
  azure: "azureConnection"
} as const

const checkAttached = (p: Problems, path: string, db: AttachedDatabase, proxied: boolean) => {
  p.require(`${path}.name`, db.name)
  if (db.type === undefined) return p.add(`${path}.type`, "is required")
  const own = attachedKeyByType[db.type]
  for (const key of Object.values(attachedKeyByType)) {
    if (key !== own && db[key] !== undefined) p.add(`${path}.${key}`, `does not belong to an attached database of type ${db.type}`)
  }
  if (db[own] === undefined) return p.add(`${path}.${own}`, `is required for an attached database of type ${db.type}`)
  if (db.postgresConnection !== undefined) checkPostgres(p, `${path}.postgresConnection`, db.postgresConnection, proxied)
  if (db.s3Connection !== undefined) checkS3(p, `${path}.s3Connection`, db.s3Connection)
  if (db.gcsConnection !== undefined) checkGcs(p, `${path}.gcsConnection`, db.gcsConnection)
  if (db.azureConnection !== undefined) checkAzure(p, `${path}.azureConnection`, db.azureConnection)
  if (db.bigqueryConnection !== undefined) checkBigquery(p, `${path}.bigqueryConnection`, db.bigqueryConnection)
  if (db.snowflakeConnection !== undefined) checkSnowflake(p, `${path}.snowflakeConnection`, db.snowflakeConnection)
}

const checkBigquery = (p: Problems, path: string, bq: NonNullable<ConnectionSettings["bigqueryConnection"]>) => {
  if (!present(bq.defaultProjectId) && !present(bq.serviceAccountKeyJson)) {
    p.add(`${path}.defaultProjectId`, "is required unless serviceAccountKeyJson names the project")
  }
  if (present(bq.serviceAccountKeyJson)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(bq.serviceAccountKeyJson ?? "")
    } catch {
      parsed = undefined
    }
    if (!Predicate.isObject(parsed) || Array.isArray(parsed)) p.add(`${path}.serviceAccountKeyJson`, "must be the JSON text of a service account key")
  }
  for (const field of ["maximumBytesBilled", "queryTimeoutMilliseconds"] as const) {
    const value = bq[field]
    if (value !== undefined && !/^\d+$/.test(value)) p.add(`${path}.${field}`, "must be a whole number written as a string")
  }
}

const checkSnowflake = (p: Problems, path: string, sf: NonNullable<ConnectionSettings["snowflakeConnection"]>) => {
  p.require(`${path}.account`, sf.account)
  p.require(`${path}.username`, sf.username)
  if (!present(sf.password) && !present(sf.privateKey)) p.add(`${path}.password`, "or privateKey is required")
  if (present(sf.privateKeyPass) && !present(sf.privateKey)) p.add(`${path}.privateKeyPass`, "needs privateKey")
}

const bucketRegExp = /^(s3|gs):\/\/[a-z0-9][a-z0-9._-]*[a-z0-9](\/.*)?$/

/** Every broken rule of a connection's settings (after an update has kept stored secrets). */
export const check = (settings: ConnectionSettings): ReadonlyArray<Problem> => {
  const p = new Problems()
  const proxied = settings.proxy !== undefined
  const own = settingsKeyByType[settings.type]
  for (const [type, key] of Object.entries(settingsKeyByType)) {
    if (key !== own && settings[key] !== undefined) p.add(key, `does not belong to a connection of type ${settings.type} (it is for ${type})`)
  }
  if (settings.type !== "duckdb" && settings[own] === undefined) p.add(own, `is required for a connection of type ${settings.type}`)

  if (settings.proxy !== undefined) {
    const ssh = settings.proxy.ssh
    if (ssh === undefined) p.add("proxy.ssh", "is required for a proxy of type ssh")
    else {
      p.require("proxy.ssh.host", ssh.host)
      p.require("proxy.ssh.username", ssh.username)
      // Public-key authentication only.
      p.require("proxy.ssh.privateKey", ssh.privateKey, "is required: the SSH proxy authenticates with a public key only")
      if (ssh.hostKey !== undefined && !isValidHostKey(ssh.hostKey)) {
        p.add("proxy.ssh.hostKey", "must be one or more known_hosts lines or bare base64 key blobs")
      }
    }
  }

  const s = settings
  if (s.postgresConnection !== undefined) checkPostgres(p, "postgresConnection", s.postgresConnection, proxied)
  if (s.mysqlConnection !== undefined) p.require("mysqlConnection.host", s.mysqlConnection.host)
  if (s.bigqueryConnection !== undefined) checkBigquery(p, "bigqueryConnection", s.bigqueryConnection)
  if (s.snowflakeConnection !== undefined) checkSnowflake(p, "snowflakeConnection", s.snowflakeConnection)
  if (s.trinoConnection !== undefined) {
    p.require("trinoConnection.server", s.trinoConnection.server)
    if (present(s.trinoConnection.server) && !urlWithScheme(s.trinoConnection.server ?? "", ["http", "https"])) {
      p.add("trinoConnection.server", "must be an http(s) URL")
    }
  }
  if (s.databricksConnection !== undefined) {
    const db = s.databricksConnection
    p.require("databricksConnection.host", db.host)
    p.require("databricksConnection.path", db.path)
    const pat = present(db.token)
    const oauth = present(db.oauthClientId) || present(db.oauthClientSecret)
    if (pat && oauth) p.add("databricksConnection.token", "cannot be combined with OAuth machine-to-machine credentials")
    if (!pat && !oauth) p.add("databricksConnection.token", "or oauthClientId with oauthClientSecret is required")
    if (oauth) {
      p.require("databricksConnection.oauthClientId", db.oauthClientId)
      p.require("databricksConnection.oauthClientSecret", db.oauthClientSecret)
    }
  }
  if (s.motherduckConnection !== undefined) p.require("motherduckConnection.accessToken", s.motherduckConnection.accessToken)
  if (s.ducklakeConnection !== undefined) {
    const lake = s.ducklakeConnection
    if (lake.storage === undefined) p.add("ducklakeConnection.storage", "is required")
    else {
      const url = lake.storage.bucketUrl
      if (!present(url)) p.add("ducklakeConnection.storage.bucketUrl", "is required")
      else if (!bucketRegExp.test(url ?? "")) p.add("ducklakeConnection.storage.bucketUrl", "must be an s3:// or gs:// bucket URL with an optional path")
      else if (url?.startsWith("s3://") && lake.storage.gcsConnection !== undefined) {
        p.add("ducklakeConnection.storage.gcsConnection", "does not apply to an s3:// bucket")
      } else if (url?.startsWith("gs://") && lake.storage.s3Connection !== undefined) {
        p.add("ducklakeConnection.storage.s3Connection", "does not apply to a gs:// bucket")
      }
      if (lake.storage.s3Connection !== undefined) checkS3(p, "ducklakeConnection.storage.s3Connection", lake.storage.s3Connection)
      if (lake.storage.gcsConnection !== undefined) checkGcs(p, "ducklakeConnection.storage.gcsConnection", lake.storage.gcsConnection)
    }
    const catalog = lake.catalog?.postgresConnection
    if (catalog === undefined) p.add("ducklakeConnection.catalog.postgresConnection", "is required")
    else checkPostgres(p, "ducklakeConnection.catalog.postgresConnection", catalog, proxied)
  }
  if (s.publisherConnection !== undefined) {
    const uri = s.publisherConnection.connectionUri
    if (!present(uri)) p.add("publisherConnection.connectionUri", "is required")
    else if (!urlWithScheme(uri ?? "", ["http", "https"])) p.add("publisherConnection.connectionUri", "must be an http(s) URL")
  }
  const attached = s.duckdbConnection?.attachedDatabases ?? []
  const seen = new Set<string>()
  attached.forEach((db, i) => {
    checkAttached(p, `duckdbConnection.attachedDatabases[${i}]`, db, proxied)
    if (db.name !== undefined) {
      if (seen.has(db.name)) p.add(`duckdbConnection.attachedDatabases[${i}].name`, `duplicates the name ${db.name}`)
      seen.add(db.name)
    }
  })
  if (s.excludeAllTables && (s.includeTables?.length ?? 0) > 0) {
    p.add("includeTables", "cannot list tables when excludeAllTables is true")
  }
  return p.list
}

/** The problems as one VALIDATION_ERROR, or the normalized settings. */
export const validate = (settings: ConnectionSettings): Effect.Effect<ConnectionSettings, ValidationError> => {
  const normalized = normalize(settings)
  const problems = check(normalized)
  return problems.length === 0
    ? Effect.succeed(normalized)
    : Effect.fail(new ValidationError({ message: formatProblems(problems) }))
}

/** Renders problems as one message: "Invalid connection: a.b is required; c must be ...". */
export const formatProblems = (problems: ReadonlyArray<Problem>): string =>
  `Invalid connection: ${problems.map((x) => `${x.path} ${x.message}`).join("; ")}`
