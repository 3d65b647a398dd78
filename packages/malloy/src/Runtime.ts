/**
 * The Malloy adapter of core's `SemanticRuntime` port: it materializes a version's files through
 * the `PackageCache`, compiles each model with the Malloy compiler, describes the models as
 * entities, and runs queries with row limits, a timeout and a bound on concurrent queries. A
 * model reads its package's files through `duckdb`, DuckDB sandboxed to the version's folder, and
 * the connections of the version's environment by their names (PostgreSQL and MySQL drivers). A
 * compiled model is kept while the fingerprints of the environment connections it used are unchanged.
 * A persist source whose build succeeded (the version's `builds`) is read from its built table:
 * queries compile with a Malloy build manifest of those tables, and a source without a matching
 * BuildID serves live.
 */
import { DuckDBConnection } from "@malloydata/db-duckdb"
import { Malloy, MalloyError, Runtime as MalloyRuntime } from "@malloydata/malloy"
import type {
  BuildManifest,
  Connection as MalloyConnection,
  LookupConnection,
  Model,
  ModelMaterializer,
  PreparedResult,
  URLReader
} from "@malloydata/malloy"
import type { Route } from "@modelgate/connections"
import { type Connection, ConnectionRepo, Fingerprint, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Cache, Clock, Duration, Effect, Exit, Layer, Option, Semaphore } from "effect"
import { readFile, stat } from "node:fs/promises"
import { join, posix, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Drivers from "./internal/Drivers.ts"
import * as PackageFolder from "./internal/PackageFolder.ts"
import { entitiesOf } from "./internal/Entities.ts"
import { absoluteTablePaths, refusal, runnable } from "./internal/QueryGuard.ts"
import * as PackageCache from "./PackageCache.ts"

const { ModelLoadFailed, QueryFailed } = SemanticRuntime

/** Options of the Malloy runtime layer. */
export interface Options {
  /** Root of the local package folders; defaults to `<os tmpdir>/modelgate-packages`. */
  readonly cacheDir?: string | undefined
  /** Rows returned when a request asks for no positive row limit; defaults to 1,000. */
  readonly defaultRowLimit?: number | undefined
  /** Upper bound on any request's row limit; defaults to 10,000. */
  readonly maxRowLimit?: number | undefined
  /** A query running longer fails with reason "timeout" and is interrupted; defaults to 60 s. */
  readonly queryTimeoutMillis?: number | undefined
  /** Queries running at once over all versions; defaults to 4. */
  readonly maxConcurrentQueries?: number | undefined
  /**
   * Bound of connecting to an environment connection (SSH session, TCP, TLS, authentication);
   * defaults to 10 s.
   */
  readonly connectTimeoutMillis?: number | undefined
  /** TLS of direct PostgreSQL environment connections, as for the connection tester; `allow` when omitted. */
  readonly postgresTls?: Route.PostgresTls | undefined
  /**
   * Test hook: called each time a model is compiled (once per location and model path, and again
   * when an environment connection it uses changes its fingerprint).
   */
  readonly onCompile?: ((location: string, modelPath: string) => void) | undefined
  /** Test hook: called each time a query text is compiled (once per model, built tables and text while cached). */
  readonly onPrepare?: ((location: string, modelPath: string, query: string) => void) | undefined
  /** Test hook: called each time the driver of an environment connection is closed, with its name. */
  readonly onConnectionClose?: ((connectionName: string) => void) | undefined
}

/** The name of a package's own sandboxed DuckDB connection; it wins over an environment connection of that name. */
export const packageConnectionName = PackageFolder.connectionName

/** A DuckDB connection whose running statement can be interrupted (the driver only aborts streams). */
class InterruptibleDuckDB extends DuckDBConnection {
  interrupt(): void {
    this.connection?.interrupt()
  }
}

/** A loaded version: its folder, its sandboxed connection and the reader of its files. */
interface LoadedVersion {
  readonly dir: string
  readonly connection: InterruptibleDuckDB
  readonly urlReader: URLReader
  running: number
}

/** The environment of a version, whose connections its models may use by name. */
interface EnvironmentOf {
  readonly organization: string
  readonly environment: string
}

/** A compiled model, and the fingerprints of the environment connections it used, by name. */
interface CompiledModel {
  readonly location: string
  readonly modelPath: string
  readonly materializer: ModelMaterializer
  readonly model: Model
  readonly uses: ReadonlyMap<string, string>
  /** The connections queries of this model run on. */
  readonly connections: LookupConnection<MalloyConnection>
  /**
   * Compiled queries of this model by build manifest and query text, most recently used last
   * (see `preparedLimit`).
   */
  readonly prepared: Map<string, PreparedResult>
}

/** Compiled queries kept per model: repeated views and queries skip the Malloy compiler. */
const preparedLimit = 256

/**
 * The runtime's layer: the `SemanticRuntime` over the `PackageStore` (package files) and the
 * `ConnectionRepo` (environment connections, read with their secrets in plaintext); every DuckDB
 * connection, pool and tunnel closes with it.
 */
export const layer = (
  options: Options = {}
): Layer.Layer<SemanticRuntime.SemanticRuntime, never, PackageStore.PackageStore | ConnectionRepo.ConnectionRepo> =>
  Layer.effect(SemanticRuntime.SemanticRuntime, make(options))

const make = Effect.fnUntraced(function*(options: Options) {
  const packages = yield* PackageCache.make({ root: options.cacheDir })
  const connections = yield* ConnectionRepo.ConnectionRepo
  const defaultRowLimit = options.defaultRowLimit ?? 1_000
  const maxRowLimit = options.maxRowLimit ?? 10_000
  const timeoutMillis = options.queryTimeoutMillis ?? 60_000
  const timeout = Duration.millis(timeoutMillis)
  const semaphore = yield* Semaphore.make(Math.max(1, options.maxConcurrentQueries ?? 4))
  const services = yield* Effect.context<never>()
  const runPromise = Effect.runPromiseWith(services)
  const open = new Set<InterruptibleDuckDB>()
  yield* Effect.addFinalizer(() =>
    Effect.promise(() => Promise.all([...open].map((connection) => connection.close().catch(() => undefined))))
  )
  // Declared after the DuckDB finalizer, so pools and tunnels close first.
  const drivers = yield* Drivers.makePool({
    connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000,
    postgresTls: options.postgresTls,
    // The server stops a PostgreSQL statement that outlives the request's timeout.
    statementTimeoutMillis: timeoutMillis,
    onClose: options.onConnectionClose
  })

  /** The latest connections read of each environment, by name; lookups resolve names here. */
  const environments = new Map<string, ReadonlyMap<string, Connection.ConnectionSettings>>()
  const environmentKey = (version: EnvironmentOf) => `${version.organization}\u0000${version.environment}`

  /**
   * Reads the environment's connections once per request: lookups during the request resolve
   * against this read, and drivers of connections that changed or vanished are closed.
   */
  const refresh = Effect.fnUntraced(function*(version: SemanticRuntime.VersionLocation) {
    const records = yield* connections.list({ organization: version.organization, environment: version.environment })
    const current = new Map(records.map((record) => [record.settings.name, record.settings] as const))
    environments.set(environmentKey(version), current)
    yield* drivers.reconcile(environmentKey(version), current)
    return current
  })

  /** The Malloy connection of `name` for a version: its own DuckDB, or an environment connection. */
  const lookup = (
    version: EnvironmentOf,
    loaded: LoadedVersion,
    observer: {
      readonly found: (name: string, fingerprint: string) => void
      readonly failed: (message: string) => void
    }
  ): LookupConnection<MalloyConnection> => ({
    lookupConnection: (name) => {
      if (name === undefined || name === packageConnectionName) return Promise.resolve(loaded.connection)
      return runPromise(Effect.gen(function*() {
        const settings = environments.get(environmentKey(version))?.get(name)
        if (settings === undefined) return yield* Effect.fail(`no connection named ${name} in environment ${version.environment}`)
        const driver = yield* drivers.acquire(environmentKey(version), settings)
        observer.found(name, driver.fingerprint)
        return withDigest(driver.connection, driver.fingerprint)
      }).pipe(Effect.catch((message) => {
        observer.failed(message)
        return Effect.fail(new Error(message))
      })))
    }
  })

  /**
   * The driver's connection with the connection's fingerprint as its Malloy digest: Malloy keys a
   * persist source's BuildID by the digest, and the materializer built the tables under the
   * fingerprint (the spec's rule), so serving must compute the same key. One view per connection.
   */
  const digested = new WeakMap<MalloyConnection, MalloyConnection>()
  const withDigest = (connection: MalloyConnection, fingerprint: string): MalloyConnection => {
    const kept = digested.get(connection)
    if (kept !== undefined) return kept
    const view = new Proxy(connection, {
      get: (target, property) => {
        if (property === "getDigest") return () => fingerprint
        const value: unknown = Reflect.get(target, property, target)
        return typeof value === "function" ? value.bind(target) : value
      }
    })
    digested.set(connection, view)
    return view
  }

  // Failures are not cached: a version whose files were missing may be published later.
  const keepSuccess = <A, E>(exit: Exit.Exit<A, E>) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero

  const versions = yield* Cache.makeWith((location: string) =>
    Effect.gen(function*() {
      const dir = yield* packages.materialize(location)
      const connection = yield* Effect.try({
        try: () =>
          new InterruptibleDuckDB({
            ...PackageFolder.sandboxed(dir)
          }),
        catch: (cause) => new ModelLoadFailed({ message: `Cannot open DuckDB for the package: ${messageOf(cause, dir)}` })
      })
      open.add(connection)
      const urlReader = {
        // Only the package's own files are readable; relative table paths become absolute inside
        // the folder, because sandboxed DuckDB resolves them against the process's cwd.
        readURL: async (url: URL) => {
          const path = url.protocol === "file:" ? fileURLToPath(url) : undefined
          if (path === undefined || !path.startsWith(dir + sep)) throw new Error(`Cannot read ${url.href}: outside the package`)
          return absoluteTablePaths(await readFile(path, "utf8"), dir, packageConnectionName)
        }
      }
      const loaded: LoadedVersion = { dir, connection, urlReader, running: 0 }
      return loaded
    }), { capacity: 256, timeToLive: keepSuccess })

  // Keyed by the version (its location, and its environment whose connections it reads) and the
  // model path; an entry stays valid while the fingerprints in its `uses` match (see `compiled`).
  const models = yield* Cache.makeWith((key: string) =>
    Effect.gen(function*() {
      const [organization = "", environment = "", location = "", modelPath = ""] = key.split("\u0000")
      const version: EnvironmentOf = { organization, environment }
      const loaded = yield* Cache.get(versions, location)
      const uses = new Map<string, string>()
      // Malloy reports a failed connection lookup as "import reference failure": the reason is kept here.
      const failures = new Set<string>()
      let compiling = true
      // One Malloy runtime per compiled model: its lookup records the connections the compiler
      // used; later lookups (running queries) resolve names again against the latest read.
      const runtime = new MalloyRuntime({
        urlReader: loaded.urlReader,
        connections: lookup(version, loaded, {
          found: (name, fingerprint) => {
            if (compiling) uses.set(name, fingerprint)
          },
          failed: (message) => {
            if (compiling) failures.add(message)
          }
        })
      })
      options.onCompile?.(location, modelPath)
      const materializer = runtime.loadModel(pathToFileURL(join(loaded.dir, modelPath)))
      const model = yield* Effect.tryPromise({
        try: () => materializer.getModel(),
        catch: (cause) =>
          new ModelLoadFailed({
            message: `${modelPath}: ${failures.size > 0 ? [...failures].join("\n") : compileMessage(cause, loaded.dir)}`
          })
      })
      compiling = false
      const result: CompiledModel = { location, modelPath, materializer, model, uses, connections: runtime.connections, prepared: new Map() }
      return result
    }), { capacity: 1_024, timeToLive: keepSuccess })

  const modelKey = (version: SemanticRuntime.VersionLocation, modelPath: string) =>
    [version.organization, version.environment, version.location, modelPath].join("\u0000")

  /** The compiled model, compiled again when a connection it used changed its fingerprint or is gone. */
  const compiled = Effect.fnUntraced(function*(
    version: SemanticRuntime.VersionLocation,
    modelPath: string,
    current: ReadonlyMap<string, Connection.ConnectionSettings>
  ) {
    const key = modelKey(version, modelPath)
    const cached = yield* Cache.get(models, key)
    const stale = [...cached.uses].some(([name, fingerprint]) => {
      const settings = current.get(name)
      return settings === undefined || Fingerprint.of(settings) !== fingerprint
    })
    if (!stale) return cached
    yield* Cache.invalidate(models, key)
    return yield* Cache.get(models, key)
  })

  const describe = Effect.fn("SemanticRuntime.describe")(function*(version: SemanticRuntime.VersionLocation) {
    const { dir } = yield* Cache.get(versions, version.location)
    const current = yield* refresh(version)
    const modelPaths = yield* Effect.tryPromise({
      try: () => PackageFolder.modelFiles(dir),
      catch: (cause) => new ModelLoadFailed({ message: `Cannot list the package's models: ${messageOf(cause, dir)}` })
    })
    return yield* Effect.forEach(modelPaths, (modelPath) =>
      Effect.map(compiled(version, modelPath, current), ({ model }): SemanticRuntime.ModelInfo => ({
        modelPath,
        entities: entitiesOf(model)
      })))
  })

  const queryText = (request: SemanticRuntime.QueryRequest, model: Model) => {
    if (request._tag === "Custom") {
      const refused = refusal(request.query)
      return refused === undefined
        ? Effect.succeed(runnable(request.query))
        : Effect.fail(new QueryFailed({ reason: "compile", message: refused }))
    }
    const source = model.explores.find((explore) => explore.name === request.sourceName)
    const view = source?.allFields.find((field) => field.isQueryField() && field.name === request.queryName)
    if (source !== undefined && view !== undefined) {
      return Effect.succeed(`run: ${quote(source.name)} -> ${quote(view.name)}`)
    }
    if (model.namedQueries.some((query) => query.name === request.queryName)) {
      return Effect.succeed(`run: ${quote(request.queryName)}`)
    }
    const where = request.sourceName === "" ? "the model" : `source ${request.sourceName}`
    return Effect.fail(new QueryFailed({ reason: "not_found", message: `No view or query ${request.queryName} in ${where}` }))
  }

  const execute = Effect.fn("SemanticRuntime.execute")(function*(
    version: SemanticRuntime.VersionLocation,
    request: SemanticRuntime.QueryRequest,
    { rowLimit }: { readonly rowLimit: number }
  ) {
    const loaded = yield* Cache.get(versions, version.location)
    const modelPath = posix.normalize(request.modelPath)
    if (!(yield* isModelFile(loaded.dir, modelPath))) {
      return yield* new QueryFailed({ reason: "not_found", message: `No model ${request.modelPath} in the package` })
    }
    // A compiled model that uses only the package's own DuckDB needs no read of the environment's
    // connections (queries cannot reach others: the guard refuses connection names in custom text).
    const warm = yield* Cache.getSuccess(models, modelKey(version, modelPath))
    const entry = Option.isSome(warm) && warm.value.uses.size === 0
      ? warm.value
      : yield* compiled(version, modelPath, yield* refresh(version))
    const text = yield* queryText(request, entry.model)
    const limit = Math.min(Number.isInteger(rowLimit) && rowLimit > 0 ? rowLimit : defaultRowLimit, maxRowLimit)
    return yield* run(loaded, entry, text, limit, version.builds ?? []).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(new QueryFailed({ reason: "timeout", message: `The query ran longer than ${Duration.format(timeout)}` }))
      }),
      semaphore.withPermits(1)
    )
  })

  /**
   * The compiled query for a text, compiled once per model and set of built tables (the row limit
   * is applied when it runs). With built tables, a persist source whose BuildID is among them reads
   * its table; the manifest is not strict, so any other source serves live.
   */
  const prepare = (loaded: LoadedVersion, entry: CompiledModel, text: string, builds: ReadonlyArray<SemanticRuntime.BuiltTable>) =>
    Effect.gen(function*() {
      // Malloy refuses a manifest for a model without the persistence flag: such a model persists nothing.
      const manifest = builds.length > 0 && persists(entry.model) ? manifestOf(builds) : undefined
      const key = `${manifest === undefined ? "" : manifestKey(manifest)}\u0000${text}`
      const kept = entry.prepared.get(key)
      if (kept !== undefined) {
        entry.prepared.delete(key)
        entry.prepared.set(key, kept)
        return kept
      }
      options.onPrepare?.(entry.location, entry.modelPath, text)
      const prepared = yield* Effect.tryPromise({
        try: () => entry.materializer.loadQuery(text).getPreparedResult(manifest === undefined ? undefined : { buildManifest: manifest }),
        catch: (cause) => new QueryFailed({ reason: "compile", message: compileMessage(cause, loaded.dir) })
      })
      entry.prepared.set(key, prepared)
      if (entry.prepared.size > preparedLimit) {
        const oldest = entry.prepared.keys().next()
        if (oldest.done !== true) entry.prepared.delete(oldest.value)
      }
      return prepared
    })

  const run = (
    loaded: LoadedVersion,
    entry: CompiledModel,
    text: string,
    limit: number,
    builds: ReadonlyArray<SemanticRuntime.BuiltTable>
  ) =>
    Effect.gen(function*() {
      const prepared = yield* prepare(loaded, entry, text, builds)
      const execute = (options: { readonly rowLimit: number; readonly abortSignal: AbortSignal }) =>
        Malloy.run({ connections: entry.connections, preparedResult: prepared, options })
      const sql = prepared.sql
      const onDuckdb = prepared.connectionName === packageConnectionName
      const started = yield* Clock.currentTimeMillis
      // One row more than the limit tells whether rows were dropped.
      const result = yield* Effect.tryPromise({
        try: (signal) => {
          // Only DuckDB statements are interrupted here; PostgreSQL ones end at their statement_timeout.
          if (!onDuckdb) return execute({ rowLimit: limit + 1, abortSignal: signal })
          loaded.running += 1
          const onAbort = () => {
            // The interrupt reaches every statement of the connection, so only a lone query is stopped.
            if (loaded.running === 1) loaded.connection.interrupt()
          }
          signal.addEventListener("abort", onAbort)
          return execute({ rowLimit: limit + 1, abortSignal: signal }).finally(() => {
            signal.removeEventListener("abort", onAbort)
            loaded.running -= 1
          })
        },
        catch: (cause) => new QueryFailed({ reason: "execute", message: messageOf(cause, loaded.dir) })
      })
      const finished = yield* Clock.currentTimeMillis
      const rows = result.data.toObject()
      const result_: SemanticRuntime.QueryResult = {
        rows: rows.slice(0, limit),
        totalRows: Math.max(result.totalRows, rows.length),
        truncated: rows.length > limit,
        executionTimeMillis: finished - started,
        // Reported paths are relative to the package: the server's folders are none of the caller's business.
        sql: withoutFolder(sql, loaded.dir)
      }
      return result_
    })

  return SemanticRuntime.SemanticRuntime.of({ describe, execute })
})

/** The non-strict Malloy build manifest of built tables: `{ tableName }` under each BuildID. */
const manifestOf = (builds: ReadonlyArray<SemanticRuntime.BuiltTable>): BuildManifest => ({
  entries: Object.fromEntries(builds.map((b) => [b.buildId, { tableName: b.table }] as const)),
  strict: false
})

/** The identity of a manifest, for the keys of compiled queries: its entries in BuildID order. */
const manifestKey = (manifest: BuildManifest) =>
  Object.entries(manifest.entries)
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([buildId, entry]) => `${buildId}=${entry.tableName}`)
    .join(",")

/** Whether a model has Malloy's persistence flag (`##! experimental.persistence`), through its imports. */
const persists = (model: Model) => model.modelAnnotations.parseAsTag("!").tag.has("experimental", "persistence")

const quote = (name: string) => `\`${name.replaceAll("`", "")}\``

const isModelFile = (dir: string, modelPath: string) =>
  modelPath.endsWith(".malloy") && !modelPath.startsWith("../") && !posix.isAbsolute(modelPath)
    ? Effect.promise(() => stat(join(dir, modelPath)).then((info) => info.isFile(), () => false))
    : Effect.succeed(false)

/** Text with the package folder's absolute path made relative. */
const withoutFolder = (text: string, dir: string) =>
  text.replaceAll(pathToFileURL(dir).href + "/", "").replaceAll(dir + sep, "").replaceAll(dir, ".")

/** A message fit for a user: no stack, and no server paths. */
const messageOf = (cause: unknown, dir: string) =>
  withoutFolder(cause instanceof Error ? cause.message : String(cause), dir)

/** Malloy's compile problems, one per line, or the error's message. */
const compileMessage = (cause: unknown, dir: string) => {
  if (cause instanceof MalloyError) {
    const errors = cause.problems.filter((problem) => problem.severity === "error")
    if (errors.length > 0) {
      return messageOf(
        errors.map((problem) =>
          problem.at === undefined ? problem.message : `line ${problem.at.range.start.line + 1}: ${problem.message}`
        ).join("\n"),
        dir
      )
    }
  }
  return messageOf(cause, dir)
}
