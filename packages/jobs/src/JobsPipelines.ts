/**
 * core's Pipelines port on the cluster: a published version starts its build
 * workflow, a changed connection sends an indexing job to the entity of that
 * connection. Both are stored before the call returns, so a crash of the API
 * process after the response loses nothing.
 */
import { Pipelines } from "@modelgate/core"
import { Effect, Layer } from "effect"
import type { Sharding } from "effect/cluster"
import type { WorkflowEngine } from "effect/workflow"
import * as ConnectionIndexing from "./ConnectionIndexing.ts"
import * as VersionBuild from "./VersionBuild.ts"

/**
 * Provides core's Pipelines port (a reference, so the layer type shows nothing provided);
 * provide it to the services' layers (PackageService, ConnectionService) so they read it when built.
 */
export const layer: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | Sharding.Sharding> = Layer.effect(
  Pipelines.Pipelines,
  Effect.gen(function*() {
    const context = yield* Effect.context<WorkflowEngine.WorkflowEngine | Sharding.Sharding>()
    const enqueue = yield* ConnectionIndexing.makeEnqueue
    const service: Pipelines.PipelinesShape = {
      versionPublished: (ref) => VersionBuild.start(ref).pipe(Effect.provideContext(context)),
      connectionChanged: (ref) => enqueue(ref)
    }
    return service
  })
)
