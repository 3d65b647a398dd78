/**
 * The build plan of a version: its persist sources and their dependencies, read
 * from the compiled models, and the materializer port that builds one source.
 * A source is a persist source when it carries a `persist` annotation tag; the
 * tag's `connection=<name>` names the connection it is built on and each
 * `depends=<source>` a persist source it reads (a dependency edge).
 */
import { Connection, ConnectionRepo } from "@modelgate/core"
import type { PackageVersion, SemanticRuntime } from "@modelgate/core"
import { Context, Effect, Layer, Schema } from "effect"

/** A persist source of the plan, with what the build needs to know about it. */
export interface PlannedSource {
  readonly node: typeof PackageVersion.BuildPlanNode.Type
  /** Source ids it depends on (built first). */
  readonly dependsOn: ReadonlyArray<string>
  /**
   * The SQL dialect of its connection when the planner knows it: `duckdb` (a package's own
   * DuckDB, no environment connection) serves live; unknown, the connection's type decides.
   */
  readonly dialect?: string | undefined
}

const tagValues = (tag: string, key: string): ReadonlyArray<string> =>
  tag.split(/\s+/).flatMap((token) => {
    const [k, v] = token.split("=", 2)
    return k === key && v !== undefined && v !== "" ? [v.replace(/^"(.*)"$/, "$1")] : []
  })

const isPersistTag = (tag: string) => tag === "persist" || tag.startsWith("persist ")

/** The persist sources of compiled models; a source id is `<modelPath>#<source>`. */
export const persistSources = (models: ReadonlyArray<SemanticRuntime.ModelInfo>): ReadonlyArray<PlannedSource> => {
  const planned: Array<PlannedSource> = []
  for (const model of models) {
    for (const entity of model.entities) {
      if (entity.kind !== "source") continue
      const tags = entity.tags.filter(isPersistTag)
      if (tags.length === 0) continue
      const connectionName = tags.flatMap((t) => tagValues(t, "connection"))[0] ?? ""
      const dependsOn = tags.flatMap((t) => tagValues(t, "depends")).map((name) => `${model.modelPath}#${name}`)
      planned.push({
        node: { sourceId: `${model.modelPath}#${entity.name}`, name: entity.name, connectionName, modelPath: model.modelPath },
        dependsOn
      })
    }
  }
  return planned
}

/** The buildPlan resource of planned sources: nodes, and `from` depends on `to` edges. */
export const toBuildPlan = (sources: ReadonlyArray<PlannedSource>): PackageVersion.BuildPlan => {
  const ids = new Set(sources.map((s) => s.node.sourceId))
  return {
    nodes: sources.map((s) => s.node),
    edges: sources.flatMap((s) => s.dependsOn.filter((to) => ids.has(to)).map((to) => ({ from: s.node.sourceId, to })))
  }
}

/** The sources in an order where every dependency comes before its dependents; a cycle fails. */
export const buildOrder = (sources: ReadonlyArray<PlannedSource>): ReadonlyArray<PlannedSource> | { readonly cycle: string } => {
  const byId = new Map(sources.map((s) => [s.node.sourceId, s]))
  const state = new Map<string, "visiting" | "done">()
  const order: Array<PlannedSource> = []
  const visit = (id: string): string | undefined => {
    const seen = state.get(id)
    if (seen === "done") return undefined
    if (seen === "visiting") return id
    const source = byId.get(id)
    if (source === undefined) return undefined
    state.set(id, "visiting")
    for (const dep of source.dependsOn) {
      const cycle = visit(dep)
      if (cycle !== undefined) return cycle
    }
    state.set(id, "done")
    order.push(source)
    return undefined
  }
  for (const s of sources) {
    const cycle = visit(s.node.sourceId)
    if (cycle !== undefined) return { cycle }
  }
  return order
}

/**
 * Whether the connection of a persist source can be materialized in v0: its type's
 * `canPersist` attribute. DuckDB-family sources serve live (UNSUPPORTED); an
 * unknown connection cannot be built at all.
 */
export const canPersist = Effect.fn("BuildPlan.canPersist")(function*(
  env: { readonly organization: string; readonly environment: string },
  connectionName: string
) {
  const connections = yield* ConnectionRepo.ConnectionRepo
  const found = yield* Effect.result(connections.get({ ...env, name: connectionName }))
  if (found._tag === "Failure") return "unknown" as const
  return Connection.attributesByType[found.success.settings.type].canPersist === true ? "yes" as const : "no" as const
})

/**
 * The record's builds after one source's build: a success replaces the source's entry with its
 * table; a failure (or a build that names no table) removes it, so the source serves live.
 */
export const withBuild = (
  builds: ReadonlyArray<PackageVersion.BuiltSource> | undefined,
  sourceId: string,
  built: SemanticRuntime.BuiltTable | undefined
): ReadonlyArray<PackageVersion.BuiltSource> => [
  ...(builds ?? []).filter((b) => b.sourceId !== sourceId),
  ...(built === undefined ? [] : [{ sourceId, buildId: built.buildId, table: built.table }])
]

/** A persist source could not be materialized; `message` is fit for a user. */
export class MaterializationFailed extends Schema.TaggedError<MaterializationFailed>()("MaterializationFailed", {
  message: Schema.String
}) {}

/** What a materializer adapter offers; its failures carry a message fit for a user. */
export interface MaterializerAdapter {
  readonly plan: (version: SemanticRuntime.VersionLocation) => Effect.Effect<ReadonlyArray<PlannedSource>, { readonly message: string }>
  readonly materialize: (
    version: SemanticRuntime.VersionLocation,
    source: typeof PackageVersion.BuildPlanNode.Type
  ) => Effect.Effect<SemanticRuntime.BuiltTable, { readonly message: string }>
}

/** Plans and builds the tables of persist sources on their connections. */
export class Materializer extends Context.Service<Materializer, {
  /**
   * The version's persist sources in build order, read from its models by the adapter. Absent:
   * the build plan comes from the described models' `persist` tags ({@link persistSources}).
   */
  readonly plan?: ((version: SemanticRuntime.VersionLocation) => Effect.Effect<ReadonlyArray<PlannedSource>, MaterializationFailed>) | undefined
  /**
   * Builds (or rebuilds) the table of one persist source; its dependencies are built first. It
   * succeeds with the table and BuildID the runtime serves, or `undefined` when it names none.
   */
  readonly materialize: (
    version: SemanticRuntime.VersionLocation,
    source: typeof PackageVersion.BuildPlanNode.Type
  ) => Effect.Effect<SemanticRuntime.BuiltTable | undefined, MaterializationFailed>
}>()("@modelgate/jobs/Materializer") {
  /**
   * A server without a materializer: persist sources on connections that could
   * persist fail their build with a clear message (DuckDB ones still serve live).
   */
  static readonly layerNone = Layer.succeed(Materializer, Materializer.of({
    materialize: (_version, source) =>
      Effect.fail(new MaterializationFailed({
        message: `persist source ${source.name}: this server has no materializer for connection ${source.connectionName}`
      }))
  }))

  /**
   * The port over an adapter made by `make` (e.g. `@modelgate/malloy`'s `Materializer.make`),
   * which lives as long as the layer.
   */
  static readonly layerFrom = <E, R>(make: Effect.Effect<MaterializerAdapter, E, R>) =>
    Layer.effect(
      Materializer,
      Effect.map(make, (adapter) => {
        const toFailure = (e: { readonly message: string }) => new MaterializationFailed({ message: e.message })
        return Materializer.of({
          plan: (version) => Effect.mapError(adapter.plan(version), toFailure),
          materialize: (version, source) =>
            adapter.materialize(version, source).pipe(
              Effect.map(({ buildId, table }): SemanticRuntime.BuiltTable => ({ buildId, table })),
              Effect.mapError(toFailure)
            )
        })
      })
    )
}
