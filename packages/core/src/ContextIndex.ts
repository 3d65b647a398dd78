/**
 * The port of the `get_context` index: it builds, per published version, the index of the
 * version's entities (sources, fields, views, queries, joins) and dimension values, and drops it
 * when the version goes away. The retrieval package implements it; the version build of the jobs
 * package and the example server's publish path call `build`, the MCP tool searches through the
 * retrieval package's own service.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { VersionLocation } from "./SemanticRuntime.ts"

/** Progress of a build: units done out of the total (models, then dimensions whose values are read). */
export interface BuildProgress {
  readonly done: number
  readonly total: number
  readonly step: "models" | "values"
}

/** What a finished build holds. */
export interface BuildSummary {
  readonly entities: number
  readonly values: number
  readonly millis: number
}

/** The index of a version could not be built; `message` is fit for a user. */
export class IndexBuildFailed extends Schema.TaggedError<IndexBuildFailed>()("IndexBuildFailed", { message: Schema.String }) {}

/** The get_context index. */
export class ContextIndex extends Context.Service<ContextIndex, {
  /** Builds (or rebuilds) the index of a version; `onProgress` is called as units complete. */
  readonly build: (
    version: VersionLocation,
    onProgress?: (progress: BuildProgress) => Effect.Effect<void>
  ) => Effect.Effect<BuildSummary, IndexBuildFailed>
  /** Forgets the index of a version (archived, deleted or republished elsewhere). */
  readonly drop: (version: VersionLocation) => Effect.Effect<void>
}>()("@modelgate/core/ContextIndex") {
  /** A layer that records the versions built and dropped, for tests of the code that calls the port. */
  static readonly layerMemory = Layer.sync(ContextIndex, () => {
    const built = new Set<string>()
    return ContextIndex.of({
      build: (version) =>
        Effect.sync(() => {
          built.add(version.location)
          return { entities: 0, values: 0, millis: 0 }
        }),
      drop: (version) => Effect.sync(() => void built.delete(version.location))
    })
  })
}
