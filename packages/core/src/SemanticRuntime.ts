/**
 * The port of the semantic runtime: it loads a published package version,
 * describes its models (sources, fields, views, named queries, docs) as plain
 * data, and runs queries with row limits. The Malloy adapter implements it; the
 * MCP tools and the retrieval index depend only on this port.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { VersionRef } from "./PackageVersion.ts"

/** Kinds of model entity. */
export const EntityKind = Schema.Literals(["source", "dimension", "measure", "view", "query", "join"])
/** A kind of model entity. */
export type EntityKind = typeof EntityKind.Type

/** One entity of a compiled model. */
export interface ModelEntity {
  readonly kind: EntityKind
  /** The source it belongs to (the source's own name for a source; empty for a top-level query). */
  readonly source: string
  readonly name: string
  /** Join path from the source, e.g. ["products"] for `order_items.products.category`. */
  readonly path: ReadonlyArray<string>
  /** The entity's data type (string, number, date, timestamp, boolean, …; empty for views). */
  readonly dataType: string
  /** Text of its `#(doc)` annotations. */
  readonly doc: string | undefined
  /** Every annotation tag, e.g. `index_values`, `currency`. */
  readonly tags: ReadonlyArray<string>
  /**
   * For views and named queries: the fields they group by, aggregate and nest, as dotted paths
   * (`carriers.carrier_name`, `flight_count`). Absent when the adapter cannot tell.
   */
  readonly fields?: ReadonlyArray<string> | undefined
}

/** A compiled model of a version: its path in the package and its entities. */
export interface ModelInfo {
  readonly modelPath: string
  readonly entities: ReadonlyArray<ModelEntity>
}

/** What to run: a custom query, or a named query or view of a source. */
export type QueryRequest =
  | { readonly _tag: "Custom"; readonly modelPath: string; readonly query: string }
  | { readonly _tag: "Named"; readonly modelPath: string; readonly sourceName: string; readonly queryName: string }

/** A query's result. `truncated` is true when rows beyond `rowLimit` were dropped. */
export interface QueryResult {
  readonly rows: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly totalRows: number
  readonly truncated: boolean
  readonly executionTimeMillis: number
  readonly sql: string | undefined
}

/** A package version could not be loaded or compiled; `message` is fit for a user. */
export class ModelLoadFailed extends Schema.TaggedError<ModelLoadFailed>()("ModelLoadFailed", { message: Schema.String }) {}

/** A query failed to compile or run, or ran out of time; `message` is fit for a user. */
export class QueryFailed extends Schema.TaggedError<QueryFailed>()("QueryFailed", {
  message: Schema.String,
  reason: Schema.Literals(["compile", "execute", "timeout", "not_found"])
}) {}

/** A persist source's built table: the BuildID it was built under and the table that holds its rows. */
export interface BuiltTable {
  readonly buildId: string
  readonly table: string
}

/** A published version to load: its ref and where its files are. */
export interface VersionLocation extends VersionRef {
  readonly location: string
  /**
   * The succeeded builds of the version's persist sources. An adapter that can serve built tables
   * reads a persist source from its table when the source's BuildID is here (and live otherwise);
   * absent or empty, every source serves live.
   */
  readonly builds?: ReadonlyArray<BuiltTable> | undefined
}

/** The semantic runtime. */
export class SemanticRuntime extends Context.Service<SemanticRuntime, {
  /** The models of a version, compiled once and cached by the adapter. */
  readonly describe: (version: VersionLocation) => Effect.Effect<ReadonlyArray<ModelInfo>, ModelLoadFailed>
  /** Runs a query against a version, with at most `rowLimit` rows returned. */
  readonly execute: (
    version: VersionLocation,
    request: QueryRequest,
    options: { readonly rowLimit: number }
  ) => Effect.Effect<QueryResult, QueryFailed | ModelLoadFailed>
}>()("@modelgate/core/SemanticRuntime") {
  /**
   * An in-memory runtime over given models, for unit tests of code that uses the
   * port: `describe` returns them; `execute` answers with `run`.
   */
  static readonly layerMemoryWith = (options: {
    readonly models: ReadonlyArray<ModelInfo>
    readonly run: (request: QueryRequest) => ReadonlyArray<Readonly<Record<string, unknown>>>
  }) =>
    Layer.succeed(
      SemanticRuntime,
      SemanticRuntime.of({
        describe: () => Effect.succeed(options.models),
        execute: (_version, request, { rowLimit }) =>
          Effect.sync(() => options.run(request)).pipe(
            Effect.map((rows) => ({
              rows: rows.slice(0, rowLimit),
              totalRows: rows.length,
              truncated: rows.length > rowLimit,
              executionTimeMillis: 0,
              sql: undefined
            }))
          )
      })
    )
}
