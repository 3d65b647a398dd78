/**
 * The MySQL (and MariaDB) connection test: one `mysql2` connection, directly or
 * through the SSH tunnel, that runs `select version()`. Server error codes decide
 * the step: access denied is authenticate, an unknown database is database.
 */
import type { Connection, Errors } from "@modelgate/core"
import { Duration, Effect, Schema } from "effect"
import mysql from "mysql2"
import { describeSocketError, errorCode, errorMessage, failed, hostPort } from "./internal/Failure.ts"
import type { Hop, Route } from "./Route.ts"

/** What a successful MySQL test learned. */
export interface Result {
  readonly serverVersion: string
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const defaultPort = 3306

const rows = Schema.Tuple([Schema.Struct({ version: Schema.String })])

const authenticateCodes = new Set(["ER_ACCESS_DENIED_ERROR", "ER_ACCESS_DENIED_NO_PASSWORD_ERROR", "ER_NOT_SUPPORTED_AUTH_MODE"])
const databaseCodes = new Set(["ER_BAD_DB_ERROR", "ER_DBACCESS_DENIED_ERROR"])

const classify = (cause: unknown, at: string, hop: Hop, route: Route): Errors.ConnectionTestFailed => {
  const code = errorCode(cause)
  // mysql2's messages quote the server (user and host), never the password.
  const message = errorMessage(cause) ?? code ?? "unknown error"
  if (code !== undefined && authenticateCodes.has(code)) return failed("authenticate", `${at} refused the login: ${message}`)
  if (code !== undefined && databaseCodes.has(code)) return failed("database", `${at}: ${message}`)
  const refused = hop.forwardFailure()
  if (route.proxy !== undefined && refused !== undefined) {
    return failed("connect", `cannot reach ${at} through the SSH proxy: the bastion reported "${refused}"`)
  }
  if (code === "ETIMEDOUT") return failed("connect", `cannot reach ${at} within ${route.options.connectTimeoutMillis} ms`)
  if (code !== undefined && (code.startsWith("E") && !code.startsWith("ER_") || code === "PROTOCOL_CONNECTION_LOST")) {
    return failed("connect", `cannot reach ${at}: ${describeSocketError(cause)}`)
  }
  return failed("query", `${at}: ${message}`)
}

/** Tests MySQL settings: connects (through the route), authenticates and runs `select version()`. */
export const test = (my: Connection.MysqlConnection, route: Route): Effect.Effect<Result, Errors.ConnectionTestFailed> =>
  Effect.scoped(Effect.gen(function*() {
    if (!present(my.host)) return yield* failed("settings", "the MySQL host is not set")
    const target = { host: my.host.trim(), port: my.port ?? defaultPort }
    const at = hostPort(target.host, target.port)
    const hop = yield* route.endpoint(target)
    const timeoutMillis = route.options.connectTimeoutMillis
    const connection = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const connection = mysql.createConnection({
          host: hop.host,
          port: hop.port,
          ...(present(my.user) ? { user: my.user } : {}),
          ...(present(my.password) ? { password: my.password } : {}),
          ...(present(my.database) ? { database: my.database } : {}),
          connectTimeout: timeoutMillis
        })
        // A fatal error after the query (the server going away) must not be unhandled.
        connection.on("error", () => {})
        return connection
      }),
      (connection) => Effect.sync(() => connection.destroy())
    )
    const result = yield* Effect.callback<unknown, Errors.ConnectionTestFailed>((resume) => {
      connection.query("select version() as version", (error, result) => {
        resume(error === null ? Effect.succeed(result) : Effect.fail(classify(error, at, hop, route)))
      })
    }).pipe(
      // mysql2 bounds the connect; this also bounds a server that accepts and then stalls.
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMillis * 2),
        orElse: () => Effect.fail(failed("connect", `${at} did not answer within ${timeoutMillis * 2} ms`))
      })
    )
    const decoded = yield* Schema.decodeUnknownEffect(rows)(result).pipe(
      Effect.mapError(() => failed("query", `${at}: select version() returned an unexpected result`))
    )
    return { serverVersion: decoded[0].version }
  }))
