/**
 * Reads the tables and columns a connection reaches, for schema indexing:
 * PostgreSQL through @effect/sql-pg, MySQL/MariaDB through mysql2, DuckDB in
 * process. The endpoint comes from @modelgate/connections' Route, so an SSH proxy
 * below the driver works as in the connection test.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { PgClient } from "@effect/sql-pg"
import type { Connection } from "@modelgate/core"
import { PostgresTester, Route } from "@modelgate/connections"
import { Duration, Effect, Schema } from "effect"
import type { Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Reactivity from "effect/reactivity/Reactivity"
import mysql from "mysql2"

/** A column of a table. */
export interface Column {
  readonly name: string
  readonly dataType: string
  readonly nullable: boolean
  readonly primaryKey: boolean
}

/** A table (or view) reached by a connection, `schema.name`. */
export interface TableRef {
  readonly schema: string
  readonly name: string
}

/** Reads one connection's catalog. */
export interface Reader {
  readonly tables: Effect.Effect<ReadonlyArray<TableRef>, IndexingFailed>
  readonly columns: (table: TableRef) => Effect.Effect<ReadonlyArray<Column>, IndexingFailed>
}

/** Reading the catalog failed; `message` is fit for a user. */
export class IndexingFailed extends Schema.TaggedError<IndexingFailed>()("IndexingFailed", { message: Schema.String }) {}

/** Deployment options of the readers. */
export interface Options {
  readonly connectTimeoutMillis: number
  /** The server's DuckDB database file read by duckdb connections (in memory, so empty, when omitted). */
  readonly duckdbPath?: string | undefined
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

// The innermost message of a driver error: SqlError wraps the server's own.
const message = (cause: unknown): string => {
  const own = typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : String(cause)
  const reason = typeof cause === "object" && cause !== null && "reason" in cause ? cause.reason : undefined
  const inner = typeof reason === "object" && reason !== null && "cause" in reason ? reason.cause : undefined
  return inner === undefined || inner === null ? own : `${own}: ${message(inner)}`
}

const systemSchemas = ["pg_catalog", "information_schema", "mysql", "performance_schema", "sys"]

const postgres = (pg: Connection.PostgresConnection, route: Route.Route) =>
  Effect.gen(function*() {
    const toFailed = (e: { readonly message: string }) => new IndexingFailed({ message: e.message })
    const where = yield* Effect.mapError(PostgresTester.target(pg), toFailed)
    const hop = yield* Effect.mapError(route.endpoint(where), toFailed)
    // The TLS the connection test used (deployment mode, sslmode through a proxy, allow's fallback),
    // settled by a first statement.
    const client = yield* PostgresTester.withTls(pg, route, where.host, (ssl) =>
      PgClient.make({
        ...PostgresTester.clientOptions(pg, hop),
        ssl,
        connectTimeout: Duration.millis(route.options.connectTimeoutMillis),
        maxConnections: 2,
        applicationName: "modelgate-indexer"
      }).pipe(Effect.tap((pool) => pool`SELECT 1`))
    ).pipe(Effect.mapError((e) => new IndexingFailed({ message: `PostgreSQL ${where.host}:${where.port}: ${message(e)}` })))
    const sql: SqlClient = client
    const fail = (cause: unknown) => new IndexingFailed({ message: `PostgreSQL ${where.host}:${where.port}: ${message(cause)}` })
    const reader: Reader = {
      tables: sql<{ readonly table_schema: string; readonly table_name: string }>`
        SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg_toast%'
        ORDER BY table_schema, table_name`.pipe(
        Effect.map((rows) => rows.map((r) => ({ schema: r.table_schema, name: r.table_name }))),
        Effect.mapError(fail)
      ),
      columns: (table) =>
        sql<{ readonly column_name: string; readonly data_type: string; readonly is_nullable: string; readonly pk: boolean }>`
          SELECT c.column_name, c.data_type, c.is_nullable,
            EXISTS (
              SELECT 1 FROM information_schema.table_constraints tc
              JOIN information_schema.key_column_usage k
                ON k.constraint_name = tc.constraint_name AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name
              WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
                AND tc.table_name = c.table_name AND k.column_name = c.column_name
            ) AS pk
          FROM information_schema.columns c
          WHERE c.table_schema = ${table.schema} AND c.table_name = ${table.name}
          ORDER BY c.ordinal_position`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({ name: r.column_name, dataType: r.data_type, nullable: r.is_nullable === "YES", primaryKey: r.pk === true }))
          ),
          Effect.mapError(fail)
        )
    }
    return reader
  })

const mysqlReader = (my: Connection.MysqlConnection, route: Route.Route) =>
  Effect.gen(function*() {
    if (!present(my.host)) return yield* new IndexingFailed({ message: "the MySQL host is not set" })
    const target = { host: my.host.trim(), port: my.port ?? 3306 }
    const hop = yield* Effect.mapError(route.endpoint(target), (e) => new IndexingFailed({ message: e.message }))
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() =>
        mysql.createPool({
          host: hop.host,
          port: hop.port,
          ...(present(my.user) ? { user: my.user } : {}),
          ...(present(my.password) ? { password: my.password } : {}),
          ...(present(my.database) ? { database: my.database } : {}),
          connectTimeout: route.options.connectTimeoutMillis,
          connectionLimit: 2
        })
      ),
      (pool) => Effect.sync(() => pool.end(() => undefined))
    )
    const query = <A>(text: string, params: ReadonlyArray<unknown>) =>
      Effect.callback<ReadonlyArray<A>, IndexingFailed>((resume) => {
        pool.query(text, [...params], (error, rows) => {
          resume(
            error === null
              ? Effect.succeed(rows as unknown as ReadonlyArray<A>)
              : Effect.fail(new IndexingFailed({ message: `MySQL ${target.host}:${target.port}: ${error.message}` }))
          )
        })
      })
    const scope = present(my.database)
      ? { clause: "table_schema = ?", params: [my.database] }
      : { clause: `table_schema NOT IN (${systemSchemas.map(() => "?").join(", ")})`, params: systemSchemas }
    const reader: Reader = {
      tables: Effect.map(
        query<{ readonly TABLE_SCHEMA: string; readonly TABLE_NAME: string }>(
          `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.tables WHERE ${scope.clause} ORDER BY TABLE_SCHEMA, TABLE_NAME`,
          scope.params
        ),
        (rows) => rows.map((r) => ({ schema: r.TABLE_SCHEMA, name: r.TABLE_NAME }))
      ),
      columns: (table) =>
        Effect.map(
          query<{ readonly COLUMN_NAME: string; readonly DATA_TYPE: string; readonly IS_NULLABLE: string; readonly COLUMN_KEY: string }>(
            `SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.columns
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
            [table.schema, table.name]
          ),
          (rows) =>
            rows.map((r) => ({ name: r.COLUMN_NAME, dataType: r.DATA_TYPE, nullable: r.IS_NULLABLE === "YES", primaryKey: r.COLUMN_KEY === "PRI" }))
        )
    }
    return reader
  })

const duckdb = (options: Options) =>
  Effect.gen(function*() {
    const path = options.duckdbPath ?? ":memory:"
    const instance = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          DuckDBInstance.create(path, {
            ...(path === ":memory:" ? {} : { access_mode: "READ_ONLY" }),
            autoinstall_known_extensions: "false",
            autoload_known_extensions: "false"
          }),
        catch: (cause) => new IndexingFailed({ message: `DuckDB could not open ${path}: ${message(cause)}` })
      }),
      (instance) => Effect.sync(() => instance.closeSync())
    )
    const connection = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => instance.connect(),
        catch: (cause) => new IndexingFailed({ message: `DuckDB: ${message(cause)}` })
      }),
      (connection) => Effect.sync(() => connection.closeSync())
    )
    const run = (text: string, params: Array<string>) =>
      Effect.tryPromise({
        try: async () => (await connection.runAndReadAll(text, params)).getRowObjectsJS(),
        catch: (cause) => new IndexingFailed({ message: `DuckDB: ${message(cause)}` })
      })
    const reader: Reader = {
      tables: Effect.map(
        run(
          "SELECT table_schema, table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1, 2",
          []
        ),
        (rows) => rows.map((r) => ({ schema: String(r["table_schema"]), name: String(r["table_name"]) }))
      ),
      columns: (table) =>
        Effect.map(
          run(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
            [table.schema, table.name]
          ),
          (rows) =>
            rows.map((r) => ({ name: String(r["column_name"]), dataType: String(r["data_type"]), nullable: r["is_nullable"] === "YES", primaryKey: false }))
        )
    }
    return reader
  })

/** The reader of a connection, open until the scope closes; types other than postgres, mysql and duckdb fail. */
export const open = (
  settings: Connection.ConnectionSettings,
  options: Options
): Effect.Effect<Reader, IndexingFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const route = yield* Effect.mapError(
      Route.make({ connectTimeoutMillis: options.connectTimeoutMillis }, settings.proxy),
      (e) => new IndexingFailed({ message: e.message })
    )
    switch (settings.type) {
      case "postgres":
        return yield* postgres(settings.postgresConnection ?? {}, route).pipe(Effect.provide(Reactivity.layer))
      case "mysql":
        return yield* mysqlReader(settings.mysqlConnection ?? {}, route)
      case "duckdb":
        return yield* duckdb(options)
      default:
        return yield* new IndexingFailed({ message: `schema indexing of ${settings.type} connections is not available on this server` })
    }
  })
