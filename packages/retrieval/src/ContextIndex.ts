/**
 * The retrieval package's adapter of core's `ContextIndex` port: `build` (called at publish by
 * the version build) indexes a version into the `Retrieval` service's memory, `drop` forgets it.
 */
import { ContextIndex } from "@modelgate/core"
import { Effect, Layer } from "effect"
import { Retrieval } from "./Retrieval.ts"

/** The `ContextIndex` port over the `Retrieval` service. */
export const layer: Layer.Layer<ContextIndex.ContextIndex, never, Retrieval> = Layer.effect(
  ContextIndex.ContextIndex,
  Effect.gen(function*() {
    const retrieval = yield* Retrieval
    return ContextIndex.ContextIndex.of({ build: retrieval.build, drop: retrieval.drop })
  })
)
