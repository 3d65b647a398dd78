import { assert, describe, it } from "@effect/vitest"
import { ContextIndex, PackageService, SemanticRuntime, VersionRepo } from "@modelgate/core"
import { Effect, Fiber, Layer, Random, Redacted, Ref } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { BuildPlan, JobsCluster, JobsPipelines, VersionBuild } from "@modelgate/jobs"
import { Storage } from "@modelgate/sql"
import { packageFiles, packageService, scratch, setupHierarchy, storageOn, system } from "./Support.ts"

const models: ReadonlyArray<SemanticRuntime.ModelInfo> = [{
  modelPath: "model.malloy",
  entities: [{ kind: "source", source: "orders", name: "orders", path: [], dataType: "", doc: undefined, tags: [] }]
}]

// Builds take a random few milliseconds, so they finish out of publish order.
const jitteryIndex = Layer.succeed(ContextIndex.ContextIndex, ContextIndex.ContextIndex.of({
  build: () =>
    Effect.gen(function*() {
      yield* Effect.sleep(yield* Random.nextIntBetween(0, 300))
      return { entities: 1, values: 0, millis: 1 }
    }),
  drop: () => Effect.void
}))

const app = Layer.unwrap(Effect.map(scratch, (db) => {
  const client = Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 12 })
  const workflows = Layer.mergeAll(VersionBuild.layer, JobsPipelines.layer).pipe(
    Layer.provide(Layer.mergeAll(SemanticRuntime.SemanticRuntime.layerMemoryWith({ models, run: () => [] }), jitteryIndex, BuildPlan.Materializer.layerNone))
  )
  return packageService.pipe(
    Layer.provideMerge(workflows),
    Layer.provideMerge(JobsCluster.layerSingle()),
    Layer.provideMerge(storageOn(client))
  )
}))

describe("auto-promote on PostgreSQL", () => {
  it.live("20 concurrent publishes: never more than one armed version; the last version ends as latest", () =>
    Effect.gen(function*() {
      yield* setupHierarchy
      const packages = yield* PackageService.PackageService
      const versions = yield* VersionRepo.VersionRepo
      const sql = yield* SqlClient
      const ref = { organization: "acme", environment: "prod", package: "sales" }
      yield* packages.createPackage(system, { organization: "acme", environment: "prod" }, { name: "sales", autoPromote: true })

      // Watches the stored armed count for the whole run.
      const maxArmed = yield* Ref.make(0)
      const watcher = yield* sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM package_versions WHERE organization = 'acme' AND package = 'sales' AND promote_when_ready`.pipe(
        Effect.flatMap(([row]) => Ref.update(maxArmed, (m) => Math.max(m, row?.n ?? 0))),
        Effect.andThen(Effect.sleep("5 millis")),
        Effect.forever,
        Effect.forkChild
      )

      const ids = Array.from({ length: 20 }, (_, i) => `1.0.${i}`)
      yield* Effect.forEach(ids, (id) => packages.publish(system, ref, id, packageFiles()), { concurrency: "unbounded" })
      const statuses = yield* Effect.forEach(ids, (id) => VersionBuild.VersionBuild.execute({ ...ref, version: id }), { concurrency: "unbounded" })
      assert.deepStrictEqual(new Set(statuses), new Set(["READY"]))
      yield* Fiber.interrupt(watcher)

      assert.isAtMost(yield* Ref.get(maxArmed), 1)
      const all = yield* versions.list(ref)
      assert.strictEqual(all.length, 20)
      // Nothing stays armed once every build settled, and the newest publish is the latest.
      assert.deepStrictEqual(all.filter((v) => v.promoteWhenReady).map((v) => v.id), [])
      const newest = all[all.length - 1]?.id
      const pkg = yield* packages.getPackage(system, ref)
      assert.strictEqual(pkg.latestVersionId, newest)
      const latest = all.find((v) => v.id === newest)
      assert.isNotNull(latest?.promotedAt)
      assert.isNull(latest?.demotedAt)
      // Every other version that was ever promoted has been demoted since.
      for (const v of all) if (v.id !== newest && v.promotedAt !== null) assert.isNotNull(v.demotedAt)
    }).pipe(Effect.provide(app)), { timeout: 120_000 })
})

