/**
 * Connection tests of the hosted warehouses (BigQuery, Snowflake, Trino, the
 * service, MotherDuck) and DuckLake. This server ships no vendor client, so each
 * test validates what can be checked locally, runs the checks it can do for real
 * (a DuckLake catalog is a PostgreSQL test), then probes the real endpoint within
 * the connect timeout: an unreachable endpoint fails at `connect`, and a reachable
 * one still fails at `driver`, because a reachable port is not a passed test.
 */
import type { Connection, Errors } from "@modelgate/core"
import { Effect, Option, Schema } from "effect"
import { createPrivateKey } from "node:crypto"
import * as Duck from "./internal/Duck.ts"
import { failed, hostPort, unverifiable, within } from "./internal/Failure.ts"
import * as PostgresTester from "./PostgresTester.ts"
import type { Route } from "./Route.ts"
import type { Endpoint } from "./SshTunnel.ts"

/** What a successful test learned; none of these tests can succeed without a vendor client. */
export interface Result {
  readonly serverVersion?: string
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const reachThen = (route: Route, target: Endpoint, what: string, why: string) =>
  Effect.andThen(route.reach(target), Effect.fail(unverifiable(hostPort(target.host, target.port), what, why)))

const readablePrivateKey = (key: string, passphrase: string | undefined): boolean => {
  try {
    createPrivateKey({ key, format: "pem", ...(present(passphrase) ? { passphrase } : {}) })
    return true
  } catch {
    return false
  }
}

const ServiceAccountKey = Schema.Struct({
  client_email: Schema.String,
  private_key: Schema.String,
  project_id: Schema.optionalKey(Schema.String)
})
const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))
const decodeServiceAccountKey = Schema.decodeUnknownOption(ServiceAccountKey)

/** The BigQuery API endpoint that every BigQuery client talks to. */
export const bigqueryEndpoint: Endpoint = { host: "bigquery.googleapis.com", port: 443 }

/**
 * BigQuery: the service account key is JSON with `client_email` and a readable
 * `private_key`, a project is known; then the BigQuery API endpoint is probed.
 */
export const bigquery = (bq: Connection.BigqueryConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.gen(function*() {
    let project = present(bq.defaultProjectId) ? bq.defaultProjectId : undefined
    if (present(bq.serviceAccountKeyJson)) {
      // Decoded to Option: a schema message could quote the key.
      const json = decodeJson(bq.serviceAccountKeyJson)
      if (Option.isNone(json)) return yield* failed("settings", "the BigQuery service account key is not JSON")
      const key = decodeServiceAccountKey(json.value)
      if (Option.isNone(key)) {
        return yield* failed("settings", "the BigQuery service account key has no client_email and private_key")
      }
      if (!readablePrivateKey(key.value.private_key, undefined)) {
        return yield* failed("settings", "the private_key of the BigQuery service account key is not a PEM private key")
      }
      project ??= key.value.project_id
    }
    if (!present(project)) {
      return yield* failed("settings", "no BigQuery project: set defaultProjectId or use a key that names project_id")
    }
    return yield* reachThen(route, bigqueryEndpoint, `access to project "${project}"`, "no BigQuery client is installed")
  })

// An account identifier: `orgname-accountname` or a locator with region and cloud.
const snowflakeAccountRegExp = /^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*$/

/** The host of a Snowflake account (`<account>.snowflakecomputing.com`), or undefined for a malformed account. */
export const snowflakeHost = (account: string): string | undefined => {
  const identifier = account.trim().replace(/\.snowflakecomputing\.com$/i, "")
  if (!snowflakeAccountRegExp.test(identifier)) return undefined
  // Host names cannot hold underscores; Snowflake's URLs use hyphens instead.
  return `${identifier.toLowerCase().replace(/_/g, "-")}.snowflakecomputing.com`
}

/** Snowflake: the account identifier, the credentials (a readable private key); then the account's host is probed. */
export const snowflake = (sf: Connection.SnowflakeConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.gen(function*() {
    if (!present(sf.account)) return yield* failed("settings", "the Snowflake account is not set")
    const host = snowflakeHost(sf.account)
    if (host === undefined) {
      return yield* failed(
        "settings",
        "the Snowflake account must be an account identifier such as myorg-myaccount or xy12345.us-east-1"
      )
    }
    if (!present(sf.username)) return yield* failed("settings", "the Snowflake username is not set")
    if (!present(sf.password) && !present(sf.privateKey)) {
      return yield* failed("settings", "the Snowflake connection needs a password or a private key")
    }
    if (present(sf.privateKey) && !readablePrivateKey(sf.privateKey, sf.privateKeyPass)) {
      return yield* failed("settings", "the Snowflake private key cannot be read (wrong passphrase, or not a PEM private key)")
    }
    return yield* reachThen(route, { host, port: 443 }, `the login of user "${sf.username}"`, "no Snowflake client is installed")
  })

const parseUrl = (value: string): URL | undefined => {
  try {
    return new URL(value.trim())
  } catch {
    return undefined
  }
}

/** Trino: the server URL; then the coordinator (its `port`, else the URL's) is probed. */
export const trino = (tr: Connection.TrinoConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.gen(function*() {
    if (!present(tr.server)) return yield* failed("settings", "the Trino server is not set")
    const url = parseUrl(tr.server)
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
      return yield* failed("settings", "the Trino server must be an http(s) URL")
    }
    const port = tr.port ?? (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80)
    if (!Number.isInteger(port) || port < 1 || port > 65535) return yield* failed("settings", "the Trino port is invalid")
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    return yield* reachThen(route, { host, port }, "the login and catalog", "no Trino client is installed")
  })

/** The service (databricks): the workspace host and warehouse path; then the workspace is probed on 443. */
export const databricks = (db: Connection.DatabricksConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.gen(function*() {
    if (!present(db.host)) return yield* failed("settings", "the workspace host is not set")
    const raw = db.host.trim()
    const host = raw.includes("://") ? parseUrl(raw)?.hostname : raw.replace(/\/.*$/, "")
    if (host === undefined || host === "" || !/^[A-Za-z0-9.-]+$/.test(host)) {
      return yield* failed("settings", "the workspace host must be a host name such as adb-123.4.azuredatabricks.net")
    }
    if (!present(db.path) || !db.path.trim().startsWith("/")) {
      return yield* failed("settings", "the SQL warehouse path must start with / (for example /sql/1.0/warehouses/abc)")
    }
    if (!present(db.token) && !(present(db.oauthClientId) && present(db.oauthClientSecret))) {
      return yield* failed("settings", "a personal access token or an OAuth client id and secret is required")
    }
    return yield* reachThen(route, { host, port: 443 }, "the token and the SQL warehouse", "no Databricks SQL client is installed")
  })

/** The MotherDuck API endpoint. */
export const motherduckEndpoint: Endpoint = { host: "api.motherduck.com", port: 443 }

/**
 * MotherDuck: an access token is set and DuckDB's motherduck extension is on this
 * server (it is never downloaded); then MotherDuck's API endpoint is probed.
 */
export const motherduck = (md: Connection.MotherDuckConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    if (!present(md.accessToken)) return yield* failed("settings", "the MotherDuck access token is not set")
    const duck = yield* Duck.open({ externalAccess: true })
    if (!(yield* duck.load("motherduck"))) return yield* Duck.unavailable("motherduck", "MotherDuck")
    return yield* reachThen(route, motherduckEndpoint, "the access token", "its connection test does not attach MotherDuck databases")
  }))

/** The endpoint of a bucket URL's object store (S3 or its custom endpoint, or GCS). */
export const storageEndpoint = (
  bucketUrl: string,
  s3: Connection.S3Connection | undefined
): Endpoint | undefined => {
  if (bucketUrl.startsWith("gs://")) return { host: "storage.googleapis.com", port: 443 }
  if (!bucketUrl.startsWith("s3://")) return undefined
  if (s3 !== undefined && present(s3.endpoint)) {
    const url = parseUrl(s3.endpoint)
    if (url === undefined || url.hostname === "") return undefined
    return { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: url.port !== "" ? Number(url.port) : url.protocol === "http:" ? 80 : 443 }
  }
  return { host: `s3.${s3?.region ?? "us-east-1"}.amazonaws.com`, port: 443 }
}

/**
 * DuckLake: the bucket URL and its store's credentials, then the PostgreSQL
 * catalog for real (through the proxy when there is one), then DuckDB's ducklake
 * and httpfs extensions (never downloaded); then the object store is probed.
 */
export const ducklake = (lake: Connection.DucklakeConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    const bucketUrl = lake.storage?.bucketUrl
    if (!present(bucketUrl)) return yield* failed("settings", "the DuckLake bucket URL is not set")
    const storage = storageEndpoint(bucketUrl.trim(), lake.storage?.s3Connection)
    if (storage === undefined) return yield* failed("settings", "the DuckLake bucket URL must be an s3:// or gs:// URL")
    if (bucketUrl.startsWith("s3://")) {
      const s3 = lake.storage?.s3Connection
      if (s3 === undefined || !present(s3.accessKeyId) || !present(s3.secretAccessKey)) {
        return yield* failed("settings", "the DuckLake S3 storage needs an access key id and a secret access key")
      }
    } else {
      const gcs = lake.storage?.gcsConnection
      if (gcs === undefined || !present(gcs.keyId) || !present(gcs.secret)) {
        return yield* failed("settings", "the DuckLake GCS storage needs an HMAC key id and secret")
      }
    }
    const catalog = lake.catalog?.postgresConnection
    if (catalog === undefined) return yield* failed("settings", "the DuckLake catalog has no PostgreSQL connection")

    // The catalog first: it is the part that can be tested for real everywhere.
    yield* PostgresTester.test(catalog, route).pipe(Effect.mapError(within("DuckLake catalog")))
    const duck = yield* Duck.open({ externalAccess: true })
    for (const extension of ["ducklake", "httpfs"] as const) {
      if (!(yield* duck.load(extension))) return yield* Duck.unavailable(extension, "DuckLake")
    }
    return yield* reachThen(route, storage, `the bucket ${bucketUrl.trim()}`, "its connection test does not attach DuckLake catalogs")
  }))
