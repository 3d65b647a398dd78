/**
 * The PostgreSQL connection test: one session with `@effect/sql-pg` (a pool of
 * one) that runs `select version()`, directly or through the SSH tunnel. It is
 * also the test of every PostgreSQL target nested in another connection (a
 * DuckLake catalog, a DuckDB attachment). Failures name the step: connect,
 * authenticate, database or query.
 */
import { PgClient } from "@effect/sql-pg"
import type { Connection, Errors } from "@modelgate/core"
import { Duration, Effect, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import * as Net from "node:net"
import type { ConnectionOptions } from "node:tls"
import { describeSocketError, errorCode, errorMessage, failed, hostPort } from "./internal/Failure.ts"
import type { Hop, PostgresTls, Route } from "./Route.ts"

/** What a successful PostgreSQL test learned. */
export interface Result {
  readonly serverVersion: string
}

/** Where a PostgreSQL connection points, from its parameters or its connection string. */
export interface Target {
  readonly host: string
  readonly port: number
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const defaultPort = 5432

/**
 * The host and port of PostgreSQL settings. A connection string is parsed here
 * only for its host and port (the tunnel replaces them); nothing of it is echoed.
 */
export const target = (pg: Connection.PostgresConnection): Effect.Effect<Target, Errors.ConnectionTestFailed> => {
  if (present(pg.connectionString)) {
    let url: URL
    try {
      url = new URL(pg.connectionString.trim())
    } catch {
      return Effect.fail(failed("settings", "the PostgreSQL connection string is not a valid URL"))
    }
    if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
      return Effect.fail(failed("settings", "the PostgreSQL connection string must start with postgres:// or postgresql://"))
    }
    const hostParam = url.searchParams.get("host")
    const host = present(hostParam ?? undefined) ? hostParam ?? "" : url.hostname.replace(/^\[(.*)\]$/, "$1")
    const portText = url.searchParams.get("port") ?? url.port
    const port = portText === "" ? defaultPort : Number(portText)
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return Effect.fail(failed("settings", "the PostgreSQL connection string has an invalid port"))
    }
    if (host === "") return Effect.fail(failed("settings", "the PostgreSQL connection string names no host"))
    return Effect.succeed({ host, port })
  }
  if (!present(pg.host)) return Effect.fail(failed("settings", "the PostgreSQL host is not set"))
  return Effect.succeed({ host: pg.host.trim(), port: pg.port ?? defaultPort })
}

const servername = (host: string) => (Net.isIP(host) === 0 ? { servername: host } : {})

/**
 * The TLS of a proxied connection from its `sslmode` (the server default is no-verify): verify-ca
 * checks the chain against the system CAs but not the host name, which a tunnel could not match.
 * Shared with the Malloy drivers, so a query reaches the database as its test did.
 */
export const proxiedTls = (mode: Connection.SslMode, host: string): boolean | ConnectionOptions => {
  switch (mode) {
    case "disable":
      return false
    case "no-verify":
      return { rejectUnauthorized: false, ...servername(host) }
    case "verify-ca":
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined, ...servername(host) }
  }
}

/** The TLS of a direct connection under the deployment's mode (`allow` is tried by the caller). */
export const directTls = (mode: Exclude<PostgresTls, "allow">, host: string): boolean | ConnectionOptions => {
  switch (mode) {
    case "disable":
      return false
    case "require":
      return { rejectUnauthorized: false, ...servername(host) }
    case "verify-full":
      return { rejectUnauthorized: true, ...servername(host) }
  }
}

const versionRow = Schema.Struct({ version: Schema.String })

const sqlState = (error: SqlError): string | undefined => errorCode(error.reason.cause)

const tlsErrorCodes = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_SSL_WRONG_VERSION_NUMBER"
])

const classify = (error: SqlError, where: Target, hop: Hop, route: Route): Errors.ConnectionTestFailed => {
  const cause = error.reason.cause
  const code = sqlState(error)
  const serverMessage = errorMessage(cause)
  const at = hostPort(where.host, where.port)
  if (code !== undefined && code.startsWith("28")) {
    return failed("authenticate", `${at} refused the login: ${serverMessage ?? `SQLSTATE ${code}`}`)
  }
  if (code === "3D000") return failed("database", `${at}: ${serverMessage ?? "the database does not exist"}`)
  if (error.reason._tag === "ConnectionError") {
    const refused = hop.forwardFailure()
    if (route.proxy !== undefined && refused !== undefined) {
      return failed("connect", `cannot reach ${at} through the SSH proxy: the bastion reported "${refused}"`)
    }
    const message = serverMessage ?? error.reason.message
    if (/timed out/i.test(message)) {
      return failed("connect", `cannot reach ${at} within ${route.options.connectTimeoutMillis} ms`)
    }
    if (/does not support TLS|refused TLS/i.test(message)) {
      return failed("connect", `${at} does not accept TLS connections`)
    }
    if (code !== undefined && tlsErrorCodes.has(code)) {
      return failed("connect", `TLS verification of ${at} failed: ${serverMessage ?? code}`)
    }
    if (code !== undefined && !/^[0-9A-Z]{5}$/.test(code)) {
      return failed("connect", `cannot reach ${at}: ${describeSocketError(cause)}`)
    }
    return failed("connect", `cannot reach ${at}: ${serverMessage ?? "the connection closed during start-up"}`)
  }
  return failed("query", `${at}: ${serverMessage ?? error.reason.message}`)
}

/**
 * The PgClient options naming a connection's endpoint and login. A connection string gives user,
 * database and its other parameters; explicit fields win, so the endpoint (a tunnel's local end)
 * and TLS replace its own. Shared with the schema indexer.
 */
export const clientOptions = (pg: Connection.PostgresConnection, hop: Hop) => ({
  ...(present(pg.connectionString) ? { url: Redacted.make(pg.connectionString.trim()) } : {}),
  host: hop.host,
  port: hop.port,
  ...(present(pg.userName) ? { username: pg.userName } : {}),
  ...(present(pg.databaseName) ? { database: pg.databaseName } : {}),
  ...(present(pg.password) ? { password: Redacted.make(pg.password) } : {})
})

const query = (pg: Connection.PostgresConnection, hop: Hop, ssl: boolean | ConnectionOptions, timeoutMillis: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return yield* sql`select version() as version`
  }).pipe(
    Effect.provide(PgClient.layer({
      ...clientOptions(pg, hop),
      ssl,
      connectTimeout: Duration.millis(timeoutMillis),
      maxConnections: 1,
      applicationName: "modelgate-connection-test"
    }))
  )

/**
 * Runs `attempt` (a session to `host` through `route`) with the TLS of the deployment's rules:
 * proxied sessions honour `sslmode` (no-verify when omitted); direct ones the deployment's mode,
 * where `allow` tries plaintext first and TLS (unverified) when a server whose pg_hba.conf admits
 * this client only over TLS refuses plaintext with SQLSTATE 28000. When TLS fails because the
 * server has none, the plaintext refusal is the error. Shared by the tester and the schema indexer,
 * so a connection is indexed as it was tested.
 */
export const withTls = <A, E, R>(
  pg: Connection.PostgresConnection,
  route: Route,
  host: string,
  attempt: (ssl: boolean | ConnectionOptions) => Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, E | SqlError, R> => {
  if (route.proxy !== undefined) return attempt(proxiedTls(pg.sslmode ?? "no-verify", host))
  const mode = route.options.postgresTls ?? "allow"
  if (mode !== "allow") return attempt(directTls(mode, host))
  return attempt(false).pipe(
    Effect.catch((plain) =>
      isSqlError(plain) && sqlState(plain) === "28000"
        ? attempt({ rejectUnauthorized: false, ...servername(host) }).pipe(
          Effect.catch((tls) =>
            Effect.fail(isSqlError(tls) && tls.reason._tag === "ConnectionError" && /TLS/.test(tls.reason.message) ? plain : tls)
          )
        )
        : Effect.fail(plain)
    )
  )
}

/**
 * Tests PostgreSQL settings: connects (through the route), authenticates and runs
 * `select version()`. Direct connections use the deployment's TLS mode; proxied
 * ones honour `sslmode` (no-verify when omitted).
 */
export const test = (pg: Connection.PostgresConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    const where = yield* target(pg)
    const hop = yield* route.endpoint(where)
    const timeoutMillis = route.options.connectTimeoutMillis
    const attempt = (ssl: boolean | ConnectionOptions) =>
      query(pg, hop, ssl, timeoutMillis).pipe(
        Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Tuple([versionRow]))(rows)),
        Effect.map(([row]) => ({ serverVersion: row.version })),
        Effect.mapError((error) =>
          Schema.isSchemaError(error)
            ? failed("query", `${hostPort(where.host, where.port)}: select version() returned an unexpected result`)
            : error
        )
      )
    return yield* withTls(pg, route, where.host, attempt).pipe(
      Effect.catchTag("SqlError", (error) => Effect.fail(classify(error, where, hop, route)))
    )
  }))
