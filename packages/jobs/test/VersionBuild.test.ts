import { assert, describe, it } from "@effect/vitest"
import { ContextIndex, PackageService, SemanticRuntime, VersionRepo } from "@modelgate/core"
import { Effect, Layer } from "effect"
import { BuildPlan, JobsCluster, JobsPipelines, VersionBuild } from "@modelgate/jobs"
import { packageFiles, packageService, pgliteStorage, setupHierarchy, system } from "./Support.ts"

const models: ReadonlyArray<SemanticRuntime.ModelInfo> = [{
  modelPath: "model.malloy",
  entities: [
    { kind: "source", source: "orders", name: "orders", path: [], dataType: "", doc: undefined, tags: [] },
    { kind: "dimension", source: "orders", name: "status", path: [], dataType: "string", doc: undefined, tags: [] },
    { kind: "measure", source: "orders", name: "revenue", path: [], dataType: "number", doc: undefined, tags: [] }
  ]
}]

// An index that reports progress for each model and records the versions it built.
const recordingIndex = (seen: Array<ContextIndex.BuildProgress>) =>
  Layer.succeed(ContextIndex.ContextIndex, ContextIndex.ContextIndex.of({
    build: (_version, onProgress) =>
      Effect.gen(function*() {
        for (let done = 0; done <= 2; done++) {
          const progress = { done, total: 2, step: "models" as const }
          seen.push(progress)
          if (onProgress !== undefined) yield* onProgress(progress)
        }
        return { entities: 3, values: 0, millis: 1 }
      }),
    drop: () => Effect.void
  }))

const app = (runtime: Layer.Layer<SemanticRuntime.SemanticRuntime>, seen: Array<ContextIndex.BuildProgress>) => {
  const cluster = JobsCluster.layerSingle()
  const workflows = Layer.mergeAll(VersionBuild.layer, JobsPipelines.layer).pipe(
    Layer.provide(Layer.mergeAll(runtime, recordingIndex(seen), BuildPlan.Materializer.layerNone))
  )
  return packageService.pipe(
    Layer.provideMerge(workflows),
    Layer.provideMerge(cluster),
    Layer.provideMerge(pgliteStorage)
  )
}

describe("version build on embedded PGlite, single runner", () => {
  const seen: Array<ContextIndex.BuildProgress> = []
  it.live("a publish builds, indexes and auto-promotes the version end to end", () =>
    Effect.gen(function*() {
      yield* setupHierarchy
      const packages = yield* PackageService.PackageService
      const ref = { organization: "acme", environment: "prod", package: "sales" }
      yield* packages.createPackage(system, { organization: "acme", environment: "prod" }, { name: "sales", autoPromote: true })
      const published = yield* packages.publish(system, ref, "1.0.0", packageFiles())
      assert.strictEqual(published.buildStatus, "BUILDING")
      assert.isTrue(published.promoteWhenReady)
      // Joins the build the publish started (one execution per version).
      const status = yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.0" })
      assert.strictEqual(status, "READY")
      const version = yield* packages.getVersion(system, { ...ref, version: "1.0.0" })
      assert.strictEqual(version.buildStatus, "READY")
      assert.isFalse(version.promoteWhenReady)
      assert.isNotNull(version.promotedAt)
      assert.isNull(version.indexingProgress)
      assert.strictEqual((yield* packages.getPackage(system, ref)).latestVersionId, "1.0.0")
      assert.deepStrictEqual(seen.map((p) => p.done), [0, 1, 2])
    }).pipe(Effect.provide(app(SemanticRuntime.SemanticRuntime.layerMemoryWith({ models, run: () => [] }), seen))), { timeout: 60_000 })

  it.live("a package that fails to compile enters error_state with its message, and is never promoted", () =>
    Effect.gen(function*() {
      yield* setupHierarchy
      const packages = yield* PackageService.PackageService
      const ref = { organization: "acme", environment: "prod", package: "sales" }
      yield* packages.createPackage(system, { organization: "acme", environment: "prod" }, { name: "sales", autoPromote: true })
      yield* packages.publish(system, ref, "1.0.0", packageFiles())
      const status = yield* VersionBuild.VersionBuild.execute({ ...ref, version: "1.0.0" })
      assert.strictEqual(status, "FAILED")
      const record = yield* (yield* VersionRepo.VersionRepo).get({ ...ref, version: "1.0.0" })
      assert.strictEqual(record.archiveStatus, "error_state")
      assert.include(record.metadata.displayErrorMessage ?? "", "syntax error near source")
      assert.isFalse(record.promoteWhenReady)
      assert.isNull((yield* packages.getPackage(system, ref)).latestVersionId)
    }).pipe(Effect.provide(app(Layer.succeed(SemanticRuntime.SemanticRuntime, SemanticRuntime.SemanticRuntime.of({
      describe: () => Effect.fail(new SemanticRuntime.ModelLoadFailed({ message: "syntax error near source" })),
      execute: () => Effect.fail(new SemanticRuntime.ModelLoadFailed({ message: "not loaded" }))
    })), []))), { timeout: 60_000 })
})

describe("BuildPlan.withBuild", () => {
  const first = { sourceId: "model.malloy#a", buildId: "1".repeat(64), table: "modelgate_1" }
  const other = { sourceId: "model.malloy#b", buildId: "2".repeat(64), table: "modelgate_2" }

  it("a success replaces the source's entry, keeping the others", () => {
    const rebuilt = BuildPlan.withBuild([first, other], first.sourceId, { buildId: "3".repeat(64), table: "modelgate_3" })
    assert.deepStrictEqual(rebuilt, [other, { sourceId: first.sourceId, buildId: "3".repeat(64), table: "modelgate_3" }])
  })

  it("a failure removes the source's entry, so it serves live", () => {
    assert.deepStrictEqual(BuildPlan.withBuild([first, other], first.sourceId, undefined), [other])
    assert.deepStrictEqual(BuildPlan.withBuild(undefined, first.sourceId, undefined), [])
  })
})
