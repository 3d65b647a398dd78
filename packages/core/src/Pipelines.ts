/**
 * The port through which the admin operations hand work to the background
 * pipelines: a published version is queued for its build (compile check, index,
 * materialization, auto-promote), a created or updated connection for indexing.
 * The jobs package implements it on effect/cluster; without it nothing is queued.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { ConnectionRef } from "./ConnectionRepo.ts"
import type { VersionRef } from "./PackageVersion.ts"

/** What the services tell the pipelines. */
export interface PipelinesShape {
  /** A version was stored at publish: queue its build. Queuing the same version twice runs one build. */
  readonly versionPublished: (ref: VersionRef) => Effect.Effect<void>
  /**
   * A connection was created or updated (its indexingStatus already moved): queue
   * indexing. Jobs of one connection run one at a time, in order.
   */
  readonly connectionChanged: (ref: ConnectionRef) => Effect.Effect<void>
}

/** Queues nothing. */
export const noop: PipelinesShape = {
  versionPublished: () => Effect.void,
  connectionChanged: () => Effect.void
}

/** One item queued through a recording service. */
export type Queued =
  | { readonly _tag: "VersionPublished"; readonly ref: VersionRef }
  | { readonly _tag: "ConnectionChanged"; readonly ref: ConnectionRef }

/** A recording service also tells what was queued, in order. */
export interface Recording extends PipelinesShape {
  readonly queued: Effect.Effect<ReadonlyArray<Queued>>
}

/** A recording pipelines service; provide it with `Effect.provideService(Pipelines, ...)` and read `queued`. */
export const makeRecording: Effect.Effect<Recording> = Effect.map(
  Ref.make<ReadonlyArray<Queued>>([]),
  (queued): Recording => ({
    versionPublished: (ref) => Ref.update(queued, (all): ReadonlyArray<Queued> => [...all, { _tag: "VersionPublished", ref }]),
    connectionChanged: (ref) => Ref.update(queued, (all): ReadonlyArray<Queued> => [...all, { _tag: "ConnectionChanged", ref }]),
    queued: Ref.get(queued)
  })
)

/**
 * The pipelines port. A reference with a no-op default, so a server (or a test)
 * without background jobs composes the services unchanged; it then queues nothing
 * and versions stay BUILDING, connections UNKNOWN.
 */
export class Pipelines extends Context.Reference<PipelinesShape>("@modelgate/core/Pipelines", {
  defaultValue: () => noop
}) {
  /** A recording layer, for tests of the services. */
  static readonly layerMemory = Layer.effect(Pipelines, makeRecording)
}
