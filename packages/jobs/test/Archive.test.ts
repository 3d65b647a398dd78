import { assert, describe, it } from "@effect/vitest"
import { PackageRepo, PackageService, VersionRepo } from "@modelgate/core"
import { DateTime, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { WorkflowEngine } from "effect/workflow"
import { AutoPromoter, Schedules } from "@modelgate/jobs"
import { packageFiles, packageService, pgliteStorage, setupHierarchy, system } from "./Support.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const env = { organization: "acme", environment: "prod" }

const app = packageService.pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provideMerge(pgliteStorage))

/**
 * A package with versions 1.0.0 (demoted at 10:00) and 1.0.1 (latest since then), and
 * `archiveDemotedAfterSeconds` = `ttl`.
 */
const demotedPackage = (name: string, ttl: number | null) =>
  Effect.gen(function*() {
    const packages = yield* PackageService.PackageService
    const versions = yield* VersionRepo.VersionRepo
    const repo = yield* PackageRepo.PackageRepo
    const ref = { ...env, package: name }
    yield* packages.createPackage(system, env, { name, archiveDemotedAfterSeconds: ttl })
    yield* packages.publish(system, ref, "1.0.0", packageFiles())
    yield* packages.publish(system, ref, "1.0.1", packageFiles())
    const old = yield* versions.get({ ...ref, version: "1.0.0" })
    yield* versions.save({ ...old, promotedAt: at("2026-05-31T09:00:00Z"), demotedAt: at("2026-05-31T10:00:00Z") })
    const latest = yield* versions.get({ ...ref, version: "1.0.1" })
    yield* versions.save({ ...latest, promotedAt: at("2026-05-31T10:00:00Z") })
    yield* repo.save({ ...(yield* repo.get(ref)), latestVersionId: "1.0.1" })
  })

const statuses = (name: string) =>
  Effect.gen(function*() {
    const all = yield* (yield* VersionRepo.VersionRepo).list({ ...env, package: name })
    return all.map((v) => [v.id, v.archiveStatus])
  })

describe("auto-archive of demoted versions", () => {
  it.live("the sweep archives a demoted version once its package's time-to-live passed; the latest and packages without one stay", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-05-31T09:00:00Z").epochMilliseconds)
      yield* setupHierarchy
      yield* demotedPackage("sales", 3600)
      yield* demotedPackage("keep", null)

      // 10:59:59: one second short of the hour since demotion.
      yield* TestClock.setTime(at("2026-05-31T10:59:59Z").epochMilliseconds)
      assert.deepStrictEqual(yield* AutoPromoter.archiveSweep, [])
      assert.deepStrictEqual(yield* statuses("sales"), [["1.0.0", "unarchive"], ["1.0.1", "unarchive"]])
      // 11:00: due; the tick of the cron archives it.
      yield* TestClock.setTime(at("2026-05-31T11:00:00Z").epochMilliseconds)
      yield* Schedules.tick
      assert.deepStrictEqual(yield* statuses("sales"), [["1.0.0", "archive"], ["1.0.1", "unarchive"]])
      assert.deepStrictEqual(yield* statuses("keep"), [["1.0.0", "unarchive"], ["1.0.1", "unarchive"]])
      // Archived once: later sweeps find nothing more to do.
      yield* TestClock.setTime(at("2026-06-30T11:00:00Z").epochMilliseconds)
      assert.deepStrictEqual(yield* AutoPromoter.archiveSweep, [])
      assert.deepStrictEqual(yield* statuses("sales"), [["1.0.0", "archive"], ["1.0.1", "unarchive"]])
    }).pipe(Effect.provide(TestClock.layer()), Effect.provide(app)), { timeout: 60_000 })
})
