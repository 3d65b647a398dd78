/**
 * Malloy drivers for the connections of an environment: a pooled PostgreSQL connection or a MySQL
 * connection opened from stored settings, reached directly or through the connection's SSH tunnel
 * (the route of `@modelgate/connections`), and the pool that keeps one driver per connection,
 * replacing it when the stored settings change and closing every driver with its scope.
 */
import type { Connection as MalloyConnection } from "@malloydata/malloy"
import { PostgresTester, Route } from "@modelgate/connections"
import type { Connection, Errors } from "@modelgate/core"
import { Fingerprint } from "@modelgate/core"
import { Effect, Exit, Predicate, Scope, Semaphore } from "effect"
import { createHash } from "node:crypto"
import type { ConnectionOptions } from "node:tls"
import type { Connection as MysqlSession } from "mysql2/promise"

/** Deployment options of the drivers. */
export interface Options {
  /** The bound of connecting: SSH session, TCP connect, TLS and authentication. */
  readonly connectTimeoutMillis: number
  /** TLS of direct PostgreSQL connections (as for the connection tester); `allow` when omitted. */
  readonly postgresTls?: Route.PostgresTls | undefined
  /** Server-side bound of one PostgreSQL statement (`statement_timeout`). */
  readonly statementTimeoutMillis: number
  /** Called after a driver is closed, with the connection's name. */
  readonly onClose?: ((name: string) => void) | undefined
}

/** An open driver of one stored connection. */
export interface Driver {
  readonly name: string
  /** The connection's effective fingerprint when the driver was opened. */
  readonly fingerprint: string
  /** A digest of all the settings, secrets included: any change opens a new driver. Never leaves memory. */
  readonly settingsKey: string
  readonly connection: MalloyConnection
  readonly scope: Scope.Closeable
}

/** The connection types a driver exists for in this build. */
export const supportedTypes: ReadonlyArray<Connection.ConnectionType> = ["postgres", "mysql"]

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    return `{${
      Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
        .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")
    }}`
  }
  return JSON.stringify(value) ?? "null"
}

/** A digest of the whole settings (secrets included), to notice any change of a stored connection. */
export const settingsKey = (settings: Connection.ConnectionSettings): string =>
  createHash("sha256").update(canonical(settings)).digest("hex")

/** The tester's messages start with "Connection test failed at <step>: "; a model's user needs only the reason. */
const reason = (error: Errors.ConnectionTestFailed) => error.message.replace(/^Connection test failed at [a-z]+: /, "")

const errorText = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const errorCode = (cause: unknown) =>
  Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : undefined

/**
 * A PostgreSQL pool whose client configuration is given whole (TLS options with functions
 * included). The driver modules load on first use: a deployment without PostgreSQL or MySQL
 * connections never loads `pg` or `mysql2`.
 */
const postgresDriver = async () => {
  const { PooledPostgresConnection } = await import("@malloydata/db-postgres")
  return class ModelgatePostgres extends PooledPostgresConnection {
    readonly clientConfig: PostgresClientConfig
    constructor(name: string, clientConfig: PostgresClientConfig) {
      super(name)
      this.clientConfig = clientConfig
    }
    protected override buildClientConfig() {
      return this.clientConfig
    }
  }
}

interface PostgresClientConfig {
  readonly host?: string
  readonly port?: number
  readonly user?: string
  readonly password?: string
  readonly database?: string
  readonly connectionString?: string
  readonly ssl: boolean | ConnectionOptions
  readonly max: number
  readonly connectionTimeoutMillis: number
  readonly idleTimeoutMillis: number
  readonly statement_timeout: number
  readonly application_name: string
}

// The TLS rules of the connection tester (PostgresTester): a proxied connection honours `sslmode`,
// a direct one follows the deployment's mode.
const { directTls, proxiedTls } = PostgresTester

// libpq parameters of a connection string that node-postgres would let override the TLS chosen here.
const tlsParameters = ["sslmode", "ssl", "sslcert", "sslkey", "sslrootcert", "sslpassword", "uselibpqcompat"]

/**
 * The connection string pointed at the endpoint (a tunnel's local end, or the target itself),
 * with explicit fields winning as in the connection test: node-postgres would otherwise let
 * the string's own host, port, user and TLS parameters win over the fields.
 */
const pointedConnectionString = (pg: Connection.PostgresConnection, hop: Route.Hop): string | undefined => {
  if (!present(pg.connectionString)) return undefined
  const url = new URL(pg.connectionString.trim())
  url.hostname = hop.host.includes(":") ? `[${hop.host}]` : hop.host
  url.port = String(hop.port)
  url.searchParams.delete("host")
  url.searchParams.delete("port")
  for (const name of tlsParameters) url.searchParams.delete(name)
  if (present(pg.userName)) url.username = encodeURIComponent(pg.userName)
  if (present(pg.password)) url.password = encodeURIComponent(pg.password)
  if (present(pg.databaseName)) url.pathname = `/${encodeURIComponent(pg.databaseName)}`
  return url.toString()
}

/** A connection once its first statement succeeded; closed again when it did not. */
const tested = async <C extends { test(): Promise<void>; close(): Promise<void> }>(connection: C): Promise<C> => {
  try {
    await connection.test()
    return connection
  } catch (error) {
    await connection.close().catch(() => undefined)
    throw error
  }
}

const openPostgres = Effect.fnUntraced(function*(name: string, settings: Connection.ConnectionSettings, options: Options, scope: Scope.Scope) {
  const pg = settings.postgresConnection ?? {}
  const target = yield* Effect.mapError(PostgresTester.target(pg), reason)
  const route = yield* Effect.mapError(Route.make(routeOptions(options), settings.proxy), reason)
  const hop = yield* Effect.mapError(Scope.provide(route.endpoint(target), scope), reason)
  const connectionString = pointedConnectionString(pg, hop)
  const base = {
    ...(connectionString === undefined
      ? {
        host: hop.host,
        port: hop.port,
        ...(present(pg.userName) ? { user: pg.userName } : {}),
        ...(present(pg.password) ? { password: pg.password } : {}),
        ...(present(pg.databaseName) ? { database: pg.databaseName } : {})
      }
      : { connectionString }),
    max: 4,
    connectionTimeoutMillis: options.connectTimeoutMillis,
    idleTimeoutMillis: 60_000,
    statement_timeout: options.statementTimeoutMillis,
    application_name: "modelgate"
  }
  const attempt = (ssl: boolean | ConnectionOptions) =>
    Effect.tryPromise({
      try: async () => {
        const ModelgatePostgres = await postgresDriver()
        return await tested(new ModelgatePostgres(name, { ...base, ssl }))
      },
      catch: (cause) => cause
    })
  const message = (cause: unknown) => `cannot connect to ${target.host}:${target.port}: ${errorText(cause)}`
  if (route.proxy !== undefined) return yield* Effect.mapError(attempt(proxiedTls(pg.sslmode ?? "no-verify", target.host)), message)
  const mode = options.postgresTls ?? "allow"
  if (mode !== "allow") return yield* Effect.mapError(attempt(directTls(mode, target.host)), message)
  // allow: plaintext first; a server admitting this client only over TLS refuses with SQLSTATE 28000.
  return yield* attempt(false).pipe(
    Effect.catch((plain) =>
      errorCode(plain) === "28000"
        ? Effect.mapError(attempt(directTls("require", target.host)), () => message(plain))
        : Effect.fail(message(plain))
    )
  )
})

const openMysql = Effect.fnUntraced(function*(name: string, settings: Connection.ConnectionSettings, options: Options, scope: Scope.Scope) {
  const my = settings.mysqlConnection ?? {}
  if (!present(my.host)) return yield* Effect.fail("the MySQL host is not set")
  const target = { host: my.host.trim(), port: my.port ?? 3306 }
  const route = yield* Effect.mapError(Route.make(routeOptions(options), settings.proxy), reason)
  const hop = yield* Effect.mapError(Scope.provide(route.endpoint(target), scope), reason)
  return yield* Effect.tryPromise({
    try: async () => {
      const ModelgateMysql = await mysqlDriver()
      const connection = new ModelgateMysql(name, {
        host: hop.host,
        port: hop.port,
        ...(present(my.user) ? { user: my.user } : {}),
        ...(present(my.password) ? { password: my.password } : {}),
        ...(present(my.database) ? { database: my.database } : {})
      }, options.connectTimeoutMillis)
      return await tested(connection)
    },
    catch: (cause) => `cannot connect to ${target.host}:${target.port}: ${errorText(cause)}`
  })
})

/**
 * Malloy's MySQL connection with its session opened here: the session's time zone is the offset
 * `+00:00` rather than the named zone `UTC` (a server without time zone tables, as MariaDB by
 * default, refuses the name), one session is opened even when the first queries race, and a
 * session the server dropped is opened again on the next query instead of failing the process.
 */
const mysqlDriver = async () => {
  const { MySQLConnection } = await import("@malloydata/db-mysql")
  const mysql = await import("mysql2/promise")
  return class ModelgateMysql extends MySQLConnection {
    readonly connectTimeoutMillis: number
    session: Promise<MysqlSession> | undefined
    constructor(name: string, config: ConstructorParameters<typeof MySQLConnection>[1], connectTimeoutMillis: number) {
      super(name, config)
      this.connectTimeoutMillis = connectTimeoutMillis
    }
    override getClient(): Promise<MysqlSession> {
      this.session ??= this.openSession().catch((error: unknown) => {
        this.session = undefined
        throw error
      })
      return this.session
    }
    private async openSession() {
      const session = await mysql.createConnection({
        host: this.config.host ?? "127.0.0.1",
        port: this.config.port ?? 3306,
        ...(this.config.user === undefined ? {} : { user: this.config.user }),
        ...(this.config.password === undefined ? {} : { password: this.config.password }),
        ...(this.config.database === undefined ? {} : { database: this.config.database }),
        // The settings Malloy's driver uses: its generated SQL relies on them.
        multipleStatements: true,
        decimalNumbers: true,
        supportBigNumbers: true,
        timezone: "+00:00",
        connectTimeout: this.connectTimeoutMillis
      })
      session.on("error", () => {
        this.session = undefined
      })
      await session.query(
        "SET SESSION time_zone = '+00:00'; SET SESSION group_concat_max_len = 10000000; " +
          "SET SESSION sql_mode = (SELECT REPLACE(@@sql_mode, 'ONLY_FULL_GROUP_BY', ''));"
      )
      return session
    }
    override async close(): Promise<void> {
      const session = this.session
      this.session = undefined
      if (session !== undefined) await session.then((open) => open.end()).catch(() => undefined)
    }
  }
}

const routeOptions = (options: Options): Route.Options => ({
  connectTimeoutMillis: options.connectTimeoutMillis,
  ...(options.postgresTls === undefined ? {} : { postgresTls: options.postgresTls })
})

/**
 * Opens the driver of a stored connection; fails with a message fit for a user that names the
 * connection (and its type when this build has no driver for it).
 */
export const open = (
  settings: Connection.ConnectionSettings,
  options: Options
): Effect.Effect<Driver, string> =>
  Effect.gen(function*() {
    const name = settings.name
    if (!supportedTypes.includes(settings.type)) {
      return yield* Effect.fail(
        `connection ${name} is of type ${settings.type}: no driver for ${settings.type} in this build (supported: ${
          supportedTypes.join(", ")
        })`
      )
    }
    const scope = yield* Scope.make()
    const opening: Effect.Effect<MalloyConnection, string> = settings.type === "postgres"
      ? openPostgres(name, settings, options, scope)
      : openMysql(name, settings, options, scope)
    const connection = yield* opening.pipe(
        Effect.mapError((message) => `connection ${name} (${settings.type}): ${message}`),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
    const driver: Driver = {
      name,
      fingerprint: Fingerprint.of(settings),
      settingsKey: settingsKey(settings),
      connection,
      scope
    }
    return driver
  })

/** Closes a driver: its pool or session first, then its tunnel. */
export const close = (driver: Driver, options: Options): Effect.Effect<void> =>
  Effect.promise(() => driver.connection.close().catch(() => undefined)).pipe(
    Effect.andThen(Scope.close(driver.scope, Exit.void)),
    Effect.andThen(Effect.sync(() => options.onClose?.(driver.name)))
  )

/** The drivers of environment connections, one per connection; see {@link makePool}. */
export interface Pool {
  /**
   * The driver of `settings`' connection in `environment`: the open one when the settings are
   * unchanged, else a new one (the previous one is closed first).
   */
  readonly acquire: (environment: string, settings: Connection.ConnectionSettings) => Effect.Effect<Driver, string>
  /**
   * Closes the drivers of `environment` whose connection is gone or whose settings changed,
   * given the environment's current connections by name.
   */
  readonly reconcile: (
    environment: string,
    current: ReadonlyMap<string, Connection.ConnectionSettings>
  ) => Effect.Effect<void>
}

/** A pool of drivers; every driver is closed when the scope closes. */
export const makePool = (options: Options): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.gen(function*() {
    const drivers = new Map<string, Driver>()
    // Opening is rare and must not race (two drivers for one connection): one lock for all.
    const lock = yield* Semaphore.make(1)
    const keyOf = (environment: string, name: string) => `${environment}\u0000${name}`
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...drivers.values()], (driver) => close(driver, options), { discard: true }).pipe(
        Effect.andThen(Effect.sync(() => drivers.clear()))
      )
    )

    const acquire = (environment: string, settings: Connection.ConnectionSettings) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const key = keyOf(environment, settings.name)
        const existing = drivers.get(key)
        if (existing !== undefined && existing.settingsKey === settingsKey(settings)) return existing
        if (existing !== undefined) {
          drivers.delete(key)
          yield* close(existing, options)
        }
        const driver = yield* open(settings, options)
        drivers.set(key, driver)
        return driver
      }))

    const reconcile = (environment: string, current: ReadonlyMap<string, Connection.ConnectionSettings>) =>
      lock.withPermits(1)(Effect.forEach([...drivers], ([key, driver]) => {
        if (!key.startsWith(keyOf(environment, ""))) return Effect.void
        const settings = current.get(driver.name)
        if (settings !== undefined && settingsKey(settings) === driver.settingsKey) return Effect.void
        drivers.delete(key)
        return close(driver, options)
      }, { discard: true }))

    const pool: Pool = { acquire, reconcile }
    return pool
  })
