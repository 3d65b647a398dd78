/**
 * An in-memory DuckDB for a connection test, configured so that a test can never
 * download anything: extensions are neither installed nor auto-loaded, only
 * loaded on request from the server's own extension directory, and file and
 * network access is off unless an extension needs it.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import type { DuckDBConnection } from "@duckdb/node-api"
import type { Errors } from "@modelgate/core"
import { Effect } from "effect"
import type { Scope } from "effect"
import { errorMessage, failed } from "./Failure.ts"

/** An open in-memory DuckDB. */
export interface Session {
  /** Runs a statement; fails with DuckDB's message. */
  readonly run: (sql: string) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, string>
  /** Whether an extension loads from the local extension directory (never downloaded). */
  readonly load: (extension: KnownExtension) => Effect.Effect<boolean>
  /** DuckDB's version. */
  readonly version: string
}

/** The DuckDB extensions a test may load (a fixed list: names go into SQL). */
export type KnownExtension = "httpfs" | "azure" | "bigquery" | "snowflake" | "motherduck" | "ducklake" | "postgres_scanner"

/** The clear failure of an extension this server does not have. */
export const unavailable = (extension: KnownExtension, what: string): Errors.ConnectionTestFailed =>
  failed("driver", `${what}: the ${extension} DuckDB extension is not available on this server`)

/** Opens an in-memory DuckDB until the scope closes; `externalAccess` allows loading extensions from disk. */
export const open = (options: { readonly externalAccess: boolean }): Effect.Effect<Session, Errors.ConnectionTestFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const instance = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          DuckDBInstance.create(":memory:", {
            enable_external_access: options.externalAccess ? "true" : "false",
            autoinstall_known_extensions: "false",
            autoload_known_extensions: "false"
          }),
        catch: (cause) => failed("connect", `DuckDB could not start: ${errorMessage(cause) ?? "unknown error"}`)
      }),
      (instance) => Effect.sync(() => instance.closeSync())
    )
    const connection: DuckDBConnection = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => instance.connect(),
        catch: (cause) => failed("connect", `DuckDB could not open a connection: ${errorMessage(cause) ?? "unknown error"}`)
      }),
      (connection) => Effect.sync(() => connection.closeSync())
    )
    const run = (sql: string) =>
      Effect.tryPromise({
        try: async () => (await connection.runAndReadAll(sql)).getRowObjectsJS(),
        catch: (cause) => errorMessage(cause) ?? "unknown DuckDB error"
      })
    const load = (extension: KnownExtension) =>
      run(`LOAD ${extension}`).pipe(Effect.as(true), Effect.catch(() => Effect.succeed(false)))
    const version = yield* run("select version() as version").pipe(
      Effect.map((rows) => String(rows[0]?.["version"] ?? "")),
      Effect.mapError((message) => failed("query", `DuckDB: ${message}`))
    )
    const session: Session = { run, load, version }
    return session
  })
