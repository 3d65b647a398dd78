/**
 * The real `ConnectionTester` of core: it routes a connection through its SSH
 * proxy when it has one and hands the settings of its type to that type's
 * tester. Configure it once, in a layer (`layer` or `layerConfig`); every wait is
 * bounded by the connect timeout and a whole test by a small multiple of it.
 */
import type { Connection, Errors } from "@modelgate/core"
import { ConnectionTester } from "@modelgate/core"
import { Config, Duration, Effect, Layer } from "effect"
import * as CloudTesters from "./CloudTesters.ts"
import * as DuckdbTester from "./DuckdbTester.ts"
import { failed } from "./internal/Failure.ts"
import * as MysqlTester from "./MysqlTester.ts"
import * as PostgresTester from "./PostgresTester.ts"
import * as PublisherTester from "./PublisherTester.ts"
import * as Route from "./Route.ts"

/** Deployment options of the testers (the connect timeout, direct PostgreSQL TLS, name resolution). */
export type Options = Route.Options

/** The connect timeout when `MODELGATE_CONNECT_TIMEOUT_MS` is not set. */
export const defaultConnectTimeoutMillis = 10_000

type Found = { readonly serverVersion?: string | undefined }

const byType = (settings: Connection.ConnectionSettings, route: Route.Route): Effect.Effect<Found, Errors.ConnectionTestFailed> => {
  const missing = (key: string) => Effect.fail(failed("settings", `${key} is required for a connection of type ${settings.type}`))
  switch (settings.type) {
    case "postgres":
      return settings.postgresConnection === undefined
        ? missing("postgresConnection")
        : PostgresTester.test(settings.postgresConnection, route)
    case "mysql":
      return settings.mysqlConnection === undefined ? missing("mysqlConnection") : MysqlTester.test(settings.mysqlConnection, route)
    case "duckdb":
      return DuckdbTester.test(settings.duckdbConnection, route)
    case "publisher":
      return settings.publisherConnection === undefined
        ? missing("publisherConnection")
        : PublisherTester.test(settings.publisherConnection, route).pipe(Effect.as({}))
    case "bigquery":
      return settings.bigqueryConnection === undefined
        ? missing("bigqueryConnection")
        : CloudTesters.bigquery(settings.bigqueryConnection, route)
    case "snowflake":
      return settings.snowflakeConnection === undefined
        ? missing("snowflakeConnection")
        : CloudTesters.snowflake(settings.snowflakeConnection, route)
    case "trino":
      return settings.trinoConnection === undefined ? missing("trinoConnection") : CloudTesters.trino(settings.trinoConnection, route)
    case "databricks":
      return settings.databricksConnection === undefined
        ? missing("databricksConnection")
        : CloudTesters.databricks(settings.databricksConnection, route)
    case "motherduck":
      return settings.motherduckConnection === undefined
        ? missing("motherduckConnection")
        : CloudTesters.motherduck(settings.motherduckConnection, route)
    case "ducklake":
      return settings.ducklakeConnection === undefined
        ? missing("ducklakeConnection")
        : CloudTesters.ducklake(settings.ducklakeConnection, route)
  }
}

/**
 * Tests a connection's settings for real: through its SSH proxy when it has one,
 * with its type's tester. A failure names its step and never a secret.
 */
export const test = (
  settings: Connection.ConnectionSettings,
  options: Options
): Effect.Effect<ConnectionTester.TestReport, Errors.ConnectionTestFailed> => {
  // Each wait is bounded already; this bounds the sum (tunnel, then driver, then query).
  const guardMillis = options.connectTimeoutMillis * 3 + 1_000
  return Route.make(options, settings.proxy).pipe(
    Effect.flatMap((route) => byType(settings, route)),
    Effect.timed,
    Effect.map(([elapsed, found]): ConnectionTester.TestReport => ({
      ...(found.serverVersion === undefined ? {} : { serverVersion: found.serverVersion }),
      elapsedMillis: Math.round(Duration.toMillis(elapsed))
    })),
    Effect.timeoutOrElse({
      duration: Duration.millis(guardMillis),
      orElse: () => Effect.fail(failed("connect", `the connection test did not finish within ${guardMillis} ms`))
    }),
    Effect.withSpan("Testers.test", { attributes: { "connection.type": settings.type } })
  )
}

/** The real connection tester with these options. */
export const layer = (options: Options): Layer.Layer<ConnectionTester.ConnectionTester> =>
  Layer.succeed(ConnectionTester.ConnectionTester, ConnectionTester.ConnectionTester.of({ test: (settings) => test(settings, options) }))

/**
 * The real connection tester from configuration: `MODELGATE_CONNECT_TIMEOUT_MS`
 * (default 10000) and `MODELGATE_POSTGRES_TLS` for direct PostgreSQL connections
 * (disable, allow, require or verify-full; default allow).
 */
export const layerConfig: Layer.Layer<ConnectionTester.ConnectionTester, Config.ConfigError> = Layer.unwrap(
  Effect.gen(function*() {
    const connectTimeoutMillis = yield* Config.Int("MODELGATE_CONNECT_TIMEOUT_MS").pipe(
      Config.withDefault(defaultConnectTimeoutMillis)
    )
    const postgresTls = yield* Config.Literals(Route.postgresTlsModes, "MODELGATE_POSTGRES_TLS").pipe(Config.withDefault("allow"))
    return layer({ connectTimeoutMillis, postgresTls })
  })
)
