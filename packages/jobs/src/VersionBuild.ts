/**
 * The build of a published version as a durable workflow: (a) compile check and
 * manifest ingest, (b) the get_context index with live progress, (c)
 * materialization of persist sources, then (d) the auto-promote reconciler. Each
 * step is an activity whose outcome is stored, so a build interrupted by a runner
 * crash resumes on another runner without redoing finished steps. The version's
 * buildStatus is never written: core derives it from the stored sides.
 */
import {
  ArchiveStatus,
  BuildStatus,
  ContextIndex,
  PackagePublish,
  PackageStore,
  PackageVersion,
  Schedule as VersionSchedule,
  SemanticRuntime,
  VersionRepo
} from "@modelgate/core"
import type { ConnectionRepo, PackageRepo } from "@modelgate/core"
import { DateTime, Effect, Layer, Result, Schema } from "effect"
import { Activity, Workflow, WorkflowEngine } from "effect/workflow"
import * as AutoPromoter from "./AutoPromoter.ts"
import * as BuildPlan from "./BuildPlan.ts"
import { modifyVersion } from "./internal/Records.ts"

/** The version a build is for. */
export const VersionBuildPayload = Schema.Struct({
  organization: Schema.String,
  environment: Schema.String,
  package: Schema.String,
  version: Schema.String
})

/** The build workflow; one execution per version (versions are immutable). */
export const VersionBuild = Workflow.make("modelgate/VersionBuild", {
  payload: VersionBuildPayload,
  success: BuildStatus.BuildStatus,
  idempotencyKey: (ref) => `${ref.organization}/${ref.environment}/${ref.package}/${ref.version}`
})

const packageOf = (ref: PackageVersion.VersionRef) => ({
  organization: ref.organization,
  environment: ref.environment,
  package: ref.package
})

const locationOf = (record: PackageVersion.VersionRecord): SemanticRuntime.VersionLocation => ({
  organization: record.organization,
  environment: record.environment,
  package: record.package,
  version: record.id,
  location: record.location
})

const failWith = (record: PackageVersion.VersionRecord, display: string, raw: string) => ({
  ...record,
  metadata: { displayErrorMessage: display, rawErrorMessage: raw }
})

/** The freshness and schedule declarations of a package manifest; absent keys are null. */
export const declarationsOf = (manifest: PackagePublish.Manifest) =>
  Schema.decodeUnknownEffect(PackageVersion.Materialization)({
    scope: manifest.raw["scope"] ?? null,
    materializationSchedule: manifest.raw["materializationSchedule"] ?? null,
    materializationFreshnessWindowSeconds: manifest.raw["materializationFreshnessWindowSeconds"] ?? null,
    materializationFreshnessFallback: manifest.raw["materializationFreshnessFallback"] ?? null
  })

const Planned = Schema.Struct({
  compiled: Schema.Boolean,
  sources: Schema.Int,
  entities: Schema.Int,
  /** Persist sources to build, in build order. */
  buildable: Schema.Array(PackageVersion.BuildPlanNode)
})

// (a) Compile check, manifest ingest and build plan. A package that does not load
// enters error_state with its message in `metadata`, and its build fails.
const compile = (ref: PackageVersion.VersionRef) =>
  Effect.gen(function*() {
    const versions = yield* modifyVersion(ref, () => Effect.succeed(undefined))
    const runtime = yield* SemanticRuntime.SemanticRuntime
    const store = yield* PackageStore.PackageStore
    const described = yield* Effect.result(runtime.describe(locationOf(versions)))
    if (Result.isFailure(described)) {
      const now = yield* DateTime.now
      const message = described.failure.message
      yield* modifyVersion(ref, (record) =>
        Effect.succeed({
          ...failWith(record, `The package failed to compile: ${message}`, message),
          archiveStatus: Result.getOrElse(ArchiveStatus.loadFailed(record.archiveStatus), () => record.archiveStatus),
          indexing: "failed" as const,
          indexingProgress: null,
          updatedAt: now
        }))
      return { compiled: false, sources: 0, entities: 0, buildable: [] }
    }
    const models = described.success
    const files = yield* Effect.orDie(store.get(versions.location))
    const manifest = PackagePublish.validate(files)
    const declared = manifest instanceof Error
      ? Result.fail(manifest.message)
      : yield* Effect.result(Effect.mapError(declarationsOf(manifest), (e) => e.message))
    // The materializer's planner reads persist sources from the models themselves (Malloy's
    // `#@ persist`); without one, the described models' `persist` tags are the plan.
    const materializer = yield* BuildPlan.Materializer
    const adapterPlan = materializer.plan === undefined
      ? Result.succeed(BuildPlan.persistSources(models))
      : yield* Effect.result(materializer.plan(locationOf(versions)))
    const planned = Result.getOrElse(adapterPlan, () => [])
    const order = BuildPlan.buildOrder(planned)
    const env = { organization: ref.organization, environment: ref.environment }
    const states = new Map<string, BuildStatus.SourceMaterialization>()
    const buildable: Array<typeof PackageVersion.BuildPlanNode.Type> = []
    let problem: string | undefined = Result.isFailure(declared) ? `invalid materialization declarations: ${declared.failure}` : undefined
    if (Result.isFailure(adapterPlan)) problem ??= `the persist sources cannot be planned: ${adapterPlan.failure.message}`
    if ("cycle" in order) problem = `persist sources depend on each other in a cycle through ${order.cycle}`
    else {
      for (const source of order) {
        // A source on the package's own DuckDB serves live (UNSUPPORTED in v0).
        const persist = source.dialect === "duckdb" ? "no" as const : yield* BuildPlan.canPersist(env, source.node.connectionName)
        if (persist === "no") states.set(source.node.sourceId, "unsupported")
        else if (persist === "unknown") {
          states.set(source.node.sourceId, "failed")
          problem ??= `persist source ${source.node.name} names an unknown connection ${JSON.stringify(source.node.connectionName)}`
        } else {
          states.set(source.node.sourceId, "pending")
          buildable.push(source.node)
        }
      }
    }
    const declaredAt = yield* DateTime.now
    const declarations = Result.isSuccess(declared) ? declared.success : PackageVersion.noMaterialization
    const next = declarations.materializationSchedule === null
      ? null
      : Result.getOrNull(VersionSchedule.nextScheduledAt(declarations.materializationSchedule, declaredAt))
    const materialization = problem !== undefined ? "failed" as const : BuildStatus.materializationOf([...states.values()])
    yield* modifyVersion(ref, (record) =>
      Effect.succeed({
        ...(problem === undefined ? record : failWith(record, `The build plan failed: ${problem}`, problem)),
        declarations,
        nextScheduledAt: next,
        buildPlan: BuildPlan.toBuildPlan(planned),
        materialization,
        updatedAt: declaredAt
      }))
    const sources = models.reduce((n, m) => n + m.entities.filter((e) => e.kind === "source").length, 0)
    const entities = models.reduce((n, m) => n + m.entities.length, 0)
    return { compiled: true, sources, entities, buildable: problem === undefined ? buildable : [] }
  })

const packageProgress = (sourcesTotal: number, completed: number, entitiesFound: number): BuildStatus.IndexingProgress => ({
  packageProgress: {
    sourcesTotal,
    sourcesProcessing: completed < sourcesTotal ? 1 : 0,
    sourcesCompleted: completed,
    sourcesFailed: 0,
    entitiesFound
  }
})

// (b) The get_context index, with `indexingProgress.packageProgress` updated as units complete.
const index = (ref: PackageVersion.VersionRef, planned: typeof Planned.Type) =>
  Effect.gen(function*() {
    const contextIndex = yield* ContextIndex.ContextIndex
    const versions = yield* VersionRepo.VersionRepo
    const started = yield* modifyVersion(ref, (record) =>
      Effect.map(DateTime.now, (now) => ({
        ...record,
        indexing: "running" as const,
        indexingProgress: packageProgress(planned.sources, 0, 0),
        updatedAt: now
      })))
    const onProgress = (progress: ContextIndex.BuildProgress) => {
      const fraction = progress.step === "values" || progress.total === 0 ? 1 : progress.done / progress.total
      const completed = Math.min(planned.sources, Math.floor(fraction * planned.sources))
      const found = Math.min(planned.entities, Math.floor(fraction * planned.entities))
      return modifyVersion(ref, (record) =>
        Effect.succeed(record.indexing === "running"
          ? { ...record, indexingProgress: packageProgress(planned.sources, completed, found) }
          : undefined)).pipe(Effect.orDie, Effect.asVoid, Effect.provideService(VersionRepo.VersionRepo, versions))
    }
    const built = yield* Effect.result(contextIndex.build(locationOf(started), onProgress))
    yield* modifyVersion(ref, (record) =>
      Effect.map(DateTime.now, (now) =>
        Result.isSuccess(built)
          ? { ...record, indexing: "succeeded" as const, indexingProgress: null, updatedAt: now }
          : {
            ...failWith(record, `Indexing failed: ${built.failure.message}`, built.failure.message),
            indexing: "failed" as const,
            indexingProgress: null,
            updatedAt: now
          }))
    return Result.isSuccess(built)
  })

// (c) Materialization of the buildable persist sources, dependencies first; the
// first failure stops the rest (they depend on it or would be served stale anyway).
const materialize = (ref: PackageVersion.VersionRef, planned: typeof Planned.Type) =>
  Effect.gen(function*() {
    if (planned.buildable.length === 0) return true
    const materializer = yield* BuildPlan.Materializer
    const setState = (state: "running" | "succeeded" | "failed", message?: string) =>
      modifyVersion(ref, (record) =>
        Effect.map(DateTime.now, (now) => ({
          ...(message === undefined ? record : failWith(record, `Materialization failed: ${message}`, message)),
          // Unsupported sources in the same version keep the side at failed/running/...:
          // materializationOf folds them, so only the buildable ones move here.
          materialization: state,
          updatedAt: now
        })))
    yield* setState("running")
    const record = yield* modifyVersion(ref, () => Effect.succeed(undefined))
    for (const node of planned.buildable) {
      const done = yield* Effect.result(materializer.materialize(locationOf(record), node))
      // Each outcome is recorded as it comes: the runtime serves a source's table once it is built.
      yield* modifyVersion(ref, (r) =>
        Effect.succeed({ ...r, builds: BuildPlan.withBuild(r.builds, node.sourceId, Result.getOrUndefined(done)) }))
      if (Result.isFailure(done)) {
        yield* setState("failed", done.failure.message)
        return false
      }
    }
    // Built sources next to sources that serve live leave the version UNSUPPORTED.
    const unsupported = (record.buildPlan?.nodes.length ?? 0) > planned.buildable.length
    yield* modifyVersion(ref, (r) =>
      Effect.succeed({ ...r, materialization: unsupported ? "unsupported" as const : "succeeded" as const }))
    return true
  })

/** What a build needs besides the workflow engine. */
export type Requirements =
  | VersionRepo.VersionRepo
  | PackageRepo.PackageRepo
  | ConnectionRepo.ConnectionRepo
  | PackageStore.PackageStore
  | SemanticRuntime.SemanticRuntime
  | ContextIndex.ContextIndex
  | BuildPlan.Materializer

/** The steps of a build, each a durable activity. */
export const run = (ref: PackageVersion.VersionRef): Effect.Effect<BuildStatus.BuildStatus, never, Requirements | WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance> =>
  Effect.gen(function*() {
    const planned = yield* Activity.make({ name: "compile", success: Planned, execute: Effect.orDie(compile(ref)) })
    if (planned.compiled) {
      const indexed = yield* Activity.make({ name: "index", success: Schema.Boolean, execute: Effect.orDie(index(ref, planned)) })
      if (indexed) {
        yield* Activity.make({ name: "materialize", success: Schema.Boolean, execute: Effect.orDie(materialize(ref, planned)) })
      }
    }
    yield* Activity.make({ name: "promote", execute: Effect.orDie(AutoPromoter.reconcile(packageOf(ref))) })
    return yield* Activity.make({
      name: "status",
      success: BuildStatus.BuildStatus,
      execute: Effect.map(Effect.orDie(modifyVersion(ref, () => Effect.succeed(undefined))), PackageVersion.buildStatusOf)
    })
  })

/** Registers the build workflow with the engine. */
export const layer: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | Requirements> = VersionBuild.toLayer((payload) => run(payload))

/** Starts the build of a version (once: a second start joins the first). */
export const start = (ref: PackageVersion.VersionRef): Effect.Effect<void, never, WorkflowEngine.WorkflowEngine> =>
  VersionBuild.execute(ref, { discard: true }).pipe(Effect.asVoid)
