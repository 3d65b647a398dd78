/**
 * Materialization of a version's persist sources on the environment connections that can persist
 * (PostgreSQL, MySQL), with Malloy's own persistence (`##! experimental.persistence` on the model,
 * `#@ persist` on a source). Malloy's build targets give each persisted table, its SQL and its
 * dependencies; the table is named by its BuildID (content-addressed over the connection's
 * fingerprint and the SQL), created under a staging name and swapped in. Sources on the package's
 * own DuckDB are planned with dialect `duckdb` and never built here: in v0 they serve live.
 */
import { DuckDBConnection } from "@malloydata/db-duckdb"
import { Runtime as MalloyRuntime } from "@malloydata/malloy"
import type { BuildManifest, BuildTarget, Connection as MalloyConnection, LookupConnection, Model, PersistSource } from "@malloydata/malloy"
import type { Route } from "@modelgate/connections"
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Effect, Schema, Scope } from "effect"
import { readFile } from "node:fs/promises"
import { join, posix, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Drivers from "./internal/Drivers.ts"
import * as PackageFolder from "./internal/PackageFolder.ts"
import { absoluteTablePaths } from "./internal/QueryGuard.ts"
import * as PackageCache from "./PackageCache.ts"

/** Options of the materializer. */
export interface Options {
  /** Root of the local package folders (shared with the runtime); `<os tmpdir>/modelgate-packages` when omitted. */
  readonly cacheDir?: string | undefined
  /** Bound of connecting to an environment connection; defaults to 10 s. */
  readonly connectTimeoutMillis?: number | undefined
  /** TLS of direct PostgreSQL connections, as for the runtime; `allow` when omitted. */
  readonly postgresTls?: Route.PostgresTls | undefined
  /** Server-side bound of one build statement on PostgreSQL; defaults to one hour. */
  readonly statementTimeoutMillis?: number | undefined
}

/** A persist source could not be planned or built; `message` is fit for a user. */
export class MaterializeFailed extends Schema.TaggedError<MaterializeFailed>()("MaterializeFailed", {
  message: Schema.String
}) {}

/** A persist source of a version, as the build plan shows it. */
export interface PlannedSource {
  /** `sourceId` is `<modelPath>#<source>`, the model that declares it. */
  readonly node: {
    readonly sourceId: string
    readonly name: string
    readonly connectionName: string
    readonly modelPath: string
  }
  /** Source ids it reads (built first). */
  readonly dependsOn: ReadonlyArray<string>
  /** The SQL dialect of its connection; `duckdb` sources serve live. */
  readonly dialect: string
}

/** A built persist source: the table that now holds its rows. */
export interface Built {
  readonly table: string
  readonly buildId: string
}

/** The materializer of persist sources. */
export interface Materializer {
  /** The version's persist sources, in build order (dependencies first). */
  readonly plan: (version: SemanticRuntime.VersionLocation) => Effect.Effect<ReadonlyArray<PlannedSource>, MaterializeFailed>
  /** Builds (or rebuilds) the table of one planned source; its dependencies must be built already. */
  readonly materialize: (
    version: SemanticRuntime.VersionLocation,
    source: PlannedSource["node"]
  ) => Effect.Effect<Built, MaterializeFailed>
}

/** The dialects whose persist sources are built. */
export const persistingDialects: ReadonlyArray<string> = ["postgres", "mysql"]

/**
 * The table of a build: `modelgate_` and the BuildID's first 40 hex digits, within PostgreSQL's
 * and MySQL's identifier limits. A runtime serving the built tables puts `{ tableName }` under the
 * BuildID in its Malloy build manifest, with the connection's fingerprint as its digest.
 */
export const tableName = (buildId: string): string => `modelgate_${buildId.slice(0, 40)}`

const errorText = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const failed = (message: string) => new MaterializeFailed({ message })

/** Malloy rejects build targets of a model without the persistence flag: such a model persists nothing. */
const withoutPersistence = (cause: unknown) => /experimental\.persistence/.test(errorText(cause))

/**
 * The materializer over the `PackageStore` (package files) and the `ConnectionRepo` (environment
 * connections with their secrets); its drivers close with the scope.
 */
export const make = (options: Options = {}): Effect.Effect<Materializer, never, PackageStore.PackageStore | ConnectionRepo.ConnectionRepo | Scope.Scope> =>
  Effect.gen(function*() {
    const packages = yield* PackageCache.make({ root: options.cacheDir })
    const connections = yield* ConnectionRepo.ConnectionRepo
    const drivers = yield* Drivers.makePool({
      connectTimeoutMillis: options.connectTimeoutMillis ?? 10_000,
      postgresTls: options.postgresTls,
      statementTimeoutMillis: options.statementTimeoutMillis ?? 3_600_000
    })
    const runPromise = Effect.runPromiseWith(yield* Effect.context<never>())

    /** Compiles `modelPath` of the version and hands the model and its connections to `use`. */
    const withModel = <A>(
      version: SemanticRuntime.VersionLocation,
      modelPaths: (dir: string) => Promise<ReadonlyArray<string>>,
      use: (
        dir: string,
        compiled: ReadonlyArray<{ readonly modelPath: string; readonly runtime: MalloyRuntime; readonly model: Model | undefined }>,
        fingerprints: ReadonlyMap<string, string>,
        lookup: LookupConnection<MalloyConnection>
      ) => Promise<A>
    ) =>
      Effect.gen(function*() {
        const dir = yield* Effect.mapError(packages.materialize(version.location), (e) => failed(e.message))
        const environment = `${version.organization}\u0000${version.environment}`
        const records = yield* connections.list({ organization: version.organization, environment: version.environment })
        const current = new Map(records.map((r) => [r.settings.name, r.settings] as const))
        yield* drivers.reconcile(environment, current)
        const fingerprints = new Map<string, string>()
        return yield* Effect.acquireUseRelease(
          Effect.sync(() =>
            new DuckDBConnection({
              ...PackageFolder.sandboxed(dir),
              // Malloy shares one DuckDB instance between connections of equal settings, and the
              // runtime's connection to this folder has locked its configuration: a setting of our
              // own (one thread is plenty to read schemas) keeps this instance private.
              threads: 1
            })
          ),
          (duckdb) =>
            Effect.tryPromise({
              try: async () => {
                const lookup: LookupConnection<MalloyConnection> = {
                  lookupConnection: (name) => {
                    if (name === undefined || name === PackageFolder.connectionName) return Promise.resolve(duckdb)
                    const settings = current.get(name)
                    if (settings === undefined) return Promise.reject(new Error(`no connection named ${name} in environment ${version.environment}`))
                    return runPromise(Effect.mapError(drivers.acquire(environment, settings), (message) => new Error(message))).then((driver) => {
                      fingerprints.set(name, driver.fingerprint)
                      return driver.connection
                    })
                  }
                }
                const urlReader = {
                  readURL: async (url: URL) => {
                    const path = url.protocol === "file:" ? fileURLToPath(url) : undefined
                    if (path === undefined || !path.startsWith(dir + sep)) throw new Error(`Cannot read ${url.href}: outside the package`)
                    return absoluteTablePaths(await readFile(path, "utf8"), dir, PackageFolder.connectionName)
                  }
                }
                const compiled = []
                for (const modelPath of await modelPaths(dir)) {
                  const runtime = new MalloyRuntime({ urlReader, connections: lookup })
                  const model = await runtime.loadModel(pathToFileURL(join(dir, modelPath))).getModel()
                  compiled.push({ modelPath, runtime, model })
                }
                return await use(dir, compiled, fingerprints, lookup)
              },
              catch: (cause) => cause instanceof MaterializeFailed ? cause : failed(errorText(cause))
            }),
          (duckdb) => Effect.promise(() => duckdb.close().catch(() => undefined))
        )
      })

    /** The model path of a Malloy sourceID (`name@file:///…/model.malloy`) inside `dir`. */
    const modelPathOf = (dir: string, source: PersistSource) => {
      const at = source.sourceID.indexOf("@")
      const path = fileURLToPath(source.sourceID.slice(at + 1))
      return posix.join(...path.slice(dir.length + 1).split(sep))
    }

    /** The build targets of a model; none for a model without the persistence flag. */
    const targetsOf = async (runtime: MalloyRuntime, model: Model) => {
      try {
        const targets = await runtime.getBuildTargets(model)
        const errors = targets.tagParseLog.filter((m) => m.severity === "error")
        if (errors.length > 0) throw failed(`invalid #@ persist annotation: ${errors.map((m) => m.message).join("; ")}`)
        return targets.connections
      } catch (cause) {
        if (withoutPersistence(cause)) return []
        throw cause
      }
    }

    const plan = Effect.fn("Materializer.plan")(function*(version: SemanticRuntime.VersionLocation) {
      return yield* withModel(version, PackageFolder.modelFiles, async (dir, compiled, _fingerprints, lookup) => {
        const planned = new Map<string, PlannedSource>()
        for (const { runtime, model } of compiled) {
          if (model === undefined) continue
          for (const build of await targetsOf(runtime, model)) {
            const dialect = (await lookup.lookupConnection(build.connectionName)).dialectName
            for (const target of build.targets) {
              const dependsOn = target.dependsOn.flatMap((d) => d.sources.map((s) => `${modelPathOf(dir, s)}#${s.name}`))
              for (const source of target.sources) {
                const modelPath = modelPathOf(dir, source)
                const sourceId = `${modelPath}#${source.name}`
                // A source an importing model reaches again keeps its first (declaring) entry.
                if (!planned.has(sourceId)) {
                  planned.set(sourceId, {
                    node: { sourceId, name: source.name, connectionName: build.connectionName, modelPath },
                    dependsOn,
                    dialect
                  })
                }
              }
            }
          }
        }
        return [...planned.values()]
      })
    })

    const materialize = Effect.fn("Materializer.materialize")(function*(
      version: SemanticRuntime.VersionLocation,
      node: PlannedSource["node"]
    ) {
      return yield* withModel(version, async () => [node.modelPath], async (dir, compiled, fingerprints, lookup) => {
        const only = compiled[0]
        if (only?.model === undefined) throw failed(`persist source ${node.name}: model ${node.modelPath} is not in the package`)
        const builds = await targetsOf(only.runtime, only.model)
        const build = builds.find((b) => b.connectionName === node.connectionName)
        const target = build?.targets.find((t) => t.sources.some((s) => s.name === node.name && modelPathOf(dir, s) === node.modelPath))
        const source = target?.sources.find((s) => s.name === node.name)
        if (target === undefined || source === undefined) {
          throw failed(`persist source ${node.name} is not declared in ${node.modelPath} on connection ${node.connectionName}`)
        }
        const connection = await lookup.lookupConnection(node.connectionName)
        if (!persistingDialects.includes(connection.dialectName)) {
          throw failed(`persist source ${node.name}: connection ${node.connectionName} (${connection.dialectName}) cannot persist; it serves live`)
        }
        // The connection's fingerprint is its contribution to the BuildID (the spec's rule).
        const digest = fingerprints.get(node.connectionName) ?? node.connectionName
        const buildIdOf = (t: BuildTarget) => (t.sources[0] ?? source).makeBuildId(digest, t.sql)
        // Dependencies are built already (plan order): the SQL to run reads their tables.
        const manifest: BuildManifest = { entries: {} }
        const seen = new Set<BuildTarget>()
        const visit = (t: BuildTarget) => {
          for (const d of t.dependsOn) {
            if (seen.has(d)) continue
            seen.add(d)
            manifest.entries[buildIdOf(d)] = { tableName: tableName(buildIdOf(d)) }
            visit(d)
          }
        }
        visit(target)
        const sql = source.getSQL({ buildManifest: manifest, connectionDigests: { [node.connectionName]: digest } })
        const buildId = buildIdOf(target)
        const table = tableName(buildId)
        const stage = `${table}_next`
        const old = `${table}_old`
        try {
          if (connection.dialectName === "postgres") {
            // One simple-protocol request: PostgreSQL runs it as one transaction, so readers see
            // the previous table until the new one replaces it.
            await connection.runSQL(
              `DROP TABLE IF EXISTS "${stage}"; CREATE TABLE "${stage}" AS ${sql}; ` +
                `DROP TABLE IF EXISTS "${table}"; ALTER TABLE "${stage}" RENAME TO "${table}"`
            )
          } else {
            // MySQL commits each DDL statement: the swap is one atomic RENAME of both tables.
            await connection.runSQL(`DROP TABLE IF EXISTS \`${stage}\``)
            await connection.runSQL(`CREATE TABLE \`${stage}\` AS ${sql}`)
            await connection.runSQL(`CREATE TABLE IF NOT EXISTS \`${table}\` AS SELECT * FROM \`${stage}\` WHERE 1 = 0`)
            await connection.runSQL(`RENAME TABLE \`${table}\` TO \`${old}\`, \`${stage}\` TO \`${table}\``)
            await connection.runSQL(`DROP TABLE IF EXISTS \`${old}\``)
          }
        } catch (cause) {
          throw failed(`persist source ${node.name}: building ${table} on ${node.connectionName} failed: ${errorText(cause)}`)
        }
        const built: Built = { table, buildId }
        return built
      })
    })

    const materializer: Materializer = { plan, materialize }
    return materializer
  })
