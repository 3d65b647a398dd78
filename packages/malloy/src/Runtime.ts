/**
 * The Malloy adapter of core's `SemanticRuntime` port: it materializes a version's files through
 * the `PackageCache`, compiles each model once with the Malloy compiler, describes the models as
 * entities, and runs queries on DuckDB sandboxed to the version's folder, with row limits, a
 * timeout and a bound on concurrent queries.
 */
import { DuckDBConnection } from "@malloydata/db-duckdb"
import { MalloyError, SingleConnectionRuntime } from "@malloydata/malloy"
import type { Model, ModelMaterializer } from "@malloydata/malloy"
import { PackageStore, SemanticRuntime } from "@modelgate/core"
import { Cache, Clock, Duration, Effect, Exit, Layer, Semaphore } from "effect"
import { readdir, readFile, stat } from "node:fs/promises"
import { join, posix, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
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
  /** Test hook: called each time a model is compiled (once per location and model path). */
  readonly onCompile?: ((location: string, modelPath: string) => void) | undefined
}

/** A DuckDB connection whose running statement can be interrupted (the driver only aborts streams). */
class InterruptibleDuckDB extends DuckDBConnection {
  interrupt(): void {
    this.connection?.interrupt()
  }
}

/** A loaded version: its folder, its sandboxed connection and the Malloy runtime over both. */
interface LoadedVersion {
  readonly dir: string
  readonly connection: InterruptibleDuckDB
  readonly runtime: SingleConnectionRuntime
  running: number
}

/** The runtime's layer: the `SemanticRuntime` over the `PackageStore`; connections close with it. */
export const layer = (options: Options = {}): Layer.Layer<SemanticRuntime.SemanticRuntime, never, PackageStore.PackageStore> =>
  Layer.effect(SemanticRuntime.SemanticRuntime, make(options))

const make = Effect.fnUntraced(function*(options: Options) {
  const packages = yield* PackageCache.make({ root: options.cacheDir })
  const defaultRowLimit = options.defaultRowLimit ?? 1_000
  const maxRowLimit = options.maxRowLimit ?? 10_000
  const timeout = Duration.millis(options.queryTimeoutMillis ?? 60_000)
  const semaphore = yield* Semaphore.make(Math.max(1, options.maxConcurrentQueries ?? 4))
  const open = new Set<InterruptibleDuckDB>()
  yield* Effect.addFinalizer(() =>
    Effect.promise(() => Promise.all([...open].map((connection) => connection.close().catch(() => undefined))))
  )

  // Failures are not cached: a version whose files were missing may be published later.
  const keepSuccess = <A, E>(exit: Exit.Exit<A, E>) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero

  const versions = yield* Cache.makeWith((location: string) =>
    Effect.gen(function*() {
      const dir = yield* packages.materialize(location)
      const connection = yield* Effect.try({
        try: () =>
          new InterruptibleDuckDB({
            name: "duckdb",
            workingDirectory: dir,
            securityPolicy: "sandboxed",
            allowedDirectories: [dir],
            enableExternalAccess: false,
            lockConfiguration: true,
            autoloadKnownExtensions: false,
            autoinstallKnownExtensions: false,
            allowCommunityExtensions: false,
            allowUnsignedExtensions: false
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
          return absoluteTablePaths(await readFile(path, "utf8"), dir)
        }
      }
      const loaded: LoadedVersion = { dir, connection, runtime: new SingleConnectionRuntime({ connection, urlReader }), running: 0 }
      return loaded
    }), { capacity: 256, timeToLive: keepSuccess })

  const models = yield* Cache.makeWith((key: string) =>
    Effect.gen(function*() {
      const [location = "", modelPath = ""] = key.split("\u0000")
      const version = yield* Cache.get(versions, location)
      options.onCompile?.(location, modelPath)
      const materializer = version.runtime.loadModel(pathToFileURL(join(version.dir, modelPath)))
      const model = yield* Effect.tryPromise({
        try: () => materializer.getModel(),
        catch: (cause) => new ModelLoadFailed({ message: `${modelPath}: ${compileMessage(cause, version.dir)}` })
      })
      return { version, materializer, model }
    }), { capacity: 1_024, timeToLive: keepSuccess })

  const compiled = (location: string, modelPath: string) => Cache.get(models, `${location}\u0000${modelPath}`)

  const describe = Effect.fn("SemanticRuntime.describe")(function*(version: SemanticRuntime.VersionLocation) {
    const { dir } = yield* Cache.get(versions, version.location)
    const modelPaths = yield* Effect.tryPromise({
      try: () => modelFiles(dir),
      catch: (cause) => new ModelLoadFailed({ message: `Cannot list the package's models: ${messageOf(cause, dir)}` })
    })
    return yield* Effect.forEach(modelPaths, (modelPath) =>
      Effect.map(compiled(version.location, modelPath), ({ model }): SemanticRuntime.ModelInfo => ({
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
    const { materializer, model } = yield* compiled(version.location, modelPath)
    const text = yield* queryText(request, model)
    const limit = Math.min(Number.isInteger(rowLimit) && rowLimit > 0 ? rowLimit : defaultRowLimit, maxRowLimit)
    return yield* run(loaded, materializer, text, limit).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(new QueryFailed({ reason: "timeout", message: `The query ran longer than ${Duration.format(timeout)}` }))
      }),
      semaphore.withPermits(1)
    )
  })

  const run = (loaded: LoadedVersion, materializer: ModelMaterializer, text: string, limit: number) =>
    Effect.gen(function*() {
      const query = materializer.loadQuery(text)
      const sql = yield* Effect.tryPromise({
        try: () => query.getSQL(),
        catch: (cause) => new QueryFailed({ reason: "compile", message: compileMessage(cause, loaded.dir) })
      })
      const started = yield* Clock.currentTimeMillis
      // One row more than the limit tells whether rows were dropped.
      const result = yield* Effect.tryPromise({
        try: (signal) => {
          loaded.running += 1
          const onAbort = () => {
            // The interrupt reaches every statement of the connection, so only a lone query is stopped.
            if (loaded.running === 1) loaded.connection.interrupt()
          }
          signal.addEventListener("abort", onAbort)
          return query.run({ rowLimit: limit + 1, abortSignal: signal }).finally(() => {
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


const quote = (name: string) => `\`${name.replaceAll("`", "")}\``

/** The package's `.malloy` files, as relative POSIX paths, sorted. */
const modelFiles = async (dir: string) => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".malloy"))
    .map((entry) => posix.join(...join(entry.parentPath, entry.name).slice(dir.length + 1).split(sep)))
    .filter((path) => !path.startsWith("."))
    .sort()
}

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
