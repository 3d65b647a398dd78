/**
 * The DuckDB connection test: an in-memory DuckDB answers `select 42`, then each
 * attached database is checked as far as this server can. A PostgreSQL
 * attachment is a real PostgreSQL test; the others need a DuckDB extension, which
 * is never downloaded: a missing one fails fast, and with one present the
 * attachment's endpoint is probed (see CloudTesters for why that cannot pass).
 */
import type { Connection, Errors } from "@modelgate/core"
import { Effect } from "effect"
import * as CloudTesters from "./CloudTesters.ts"
import * as Duck from "./internal/Duck.ts"
import { failed, hostPort, unverifiable, within } from "./internal/Failure.ts"
import * as PostgresTester from "./PostgresTester.ts"
import type { Route } from "./Route.ts"
import type { Endpoint } from "./SshTunnel.ts"

/** What a successful DuckDB test learned. */
export interface Result {
  readonly serverVersion: string
}

/** The DuckDB extension each non-PostgreSQL attachment type needs. */
export const extensionByType = {
  s3: "httpfs",
  gcs: "httpfs",
  azure: "azure",
  bigquery: "bigquery",
  snowflake: "snowflake"
} as const satisfies Record<Exclude<Connection.AttachedDatabaseType, "postgres">, Duck.KnownExtension>

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const azureEndpoint = (az: Connection.AzureConnection): Endpoint | undefined => {
  for (const value of [az.sasUrl, az.fileUrl]) {
    if (!present(value)) continue
    try {
      const url = new URL(value.trim())
      if (url.protocol === "https:" || url.protocol === "http:") {
        return { host: url.hostname, port: url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80 }
      }
    } catch {
      // not a URL: fall through to the account name
    }
  }
  return present(az.accountName) ? { host: `${az.accountName.trim()}.blob.core.windows.net`, port: 443 } : undefined
}

const checkAttached = (db: Connection.AttachedDatabase, label: string, route: Route) =>
  Effect.gen(function*() {
    switch (db.type) {
      case undefined:
        return yield* failed("settings", "its type is not set")
      case "postgres":
        if (db.postgresConnection === undefined) return yield* failed("settings", "its postgresConnection is not set")
        yield* PostgresTester.test(db.postgresConnection, route)
        return
      case "bigquery":
        if (db.bigqueryConnection === undefined) return yield* failed("settings", "its bigqueryConnection is not set")
        yield* CloudTesters.bigquery(db.bigqueryConnection, route)
        return
      case "snowflake":
        if (db.snowflakeConnection === undefined) return yield* failed("settings", "its snowflakeConnection is not set")
        yield* CloudTesters.snowflake(db.snowflakeConnection, route)
        return
      case "s3": {
        const s3 = db.s3Connection
        if (s3 === undefined || !present(s3.accessKeyId) || !present(s3.secretAccessKey)) {
          return yield* failed("settings", "S3 needs an access key id and a secret access key")
        }
        const endpoint = CloudTesters.storageEndpoint("s3://", s3)
        if (endpoint === undefined) return yield* failed("settings", "the S3 endpoint is not a valid URL")
        return yield* storageProbe(route, endpoint, "the S3 credentials")
      }
      case "gcs": {
        const gcs = db.gcsConnection
        if (gcs === undefined || !present(gcs.keyId) || !present(gcs.secret)) {
          return yield* failed("settings", "GCS needs an HMAC key id and secret")
        }
        return yield* storageProbe(route, { host: "storage.googleapis.com", port: 443 }, "the GCS HMAC key")
      }
      case "azure": {
        const endpoint = db.azureConnection === undefined ? undefined : azureEndpoint(db.azureConnection)
        if (endpoint === undefined) return yield* failed("settings", "Azure names no storage account or URL")
        return yield* storageProbe(route, endpoint, "the Azure credentials")
      }
    }
  }).pipe(Effect.mapError(within(label)))

// An object store attachment names no object to read, so only its endpoint can be checked.
const storageProbe = (route: Route, endpoint: Endpoint, what: string) =>
  Effect.andThen(
    route.reach(endpoint),
    Effect.fail(unverifiable(hostPort(endpoint.host, endpoint.port), what, "an attachment names no object to read"))
  )

/**
 * Tests DuckDB settings: DuckDB runs `select 42`; every needed extension must be on
 * this server (checked for all attachments before any network check), then each
 * attachment is checked in order.
 */
export const test = (
  duckdb: Connection.DuckdbConnection | undefined,
  route: Route
): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    const attached = duckdb?.attachedDatabases ?? []
    // Loading an extension from the server's directory needs file access; without
    // attachments that need one, DuckDB runs with external access off.
    const needsExtension = attached.some((db) => db.type !== undefined && db.type !== "postgres")
    const duck = yield* Duck.open({ externalAccess: needsExtension })
    const answer = yield* duck.run("select 42 as answer").pipe(
      Effect.mapError((message) => failed("query", `DuckDB: ${message}`))
    )
    if (Number(answer[0]?.["answer"]) !== 42) return yield* failed("query", "DuckDB: select 42 returned an unexpected result")

    const labelled = attached.map((db, index) => ({
      db,
      label: `attached database "${present(db.name) ? db.name : `#${index + 1}`}"`
    }))
    for (const { db, label } of labelled) {
      if (db.type === undefined || db.type === "postgres") continue
      const extension = extensionByType[db.type]
      if (!(yield* duck.load(extension))) return yield* Duck.unavailable(extension, `${label} (${db.type})`)
    }
    for (const { db, label } of labelled) yield* checkAttached(db, label, route)
    return { serverVersion: `DuckDB ${duck.version}` }
  }))
