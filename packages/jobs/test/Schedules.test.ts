import { assert, describe, it } from "@effect/vitest"
import { PackageService, PackageVersion, Schedule as VersionSchedule, VersionRepo } from "@modelgate/core"
import { DateTime, Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { WorkflowEngine } from "effect/workflow"
import { BuildPlan, Schedules } from "@modelgate/jobs"
import { packageFiles, packageService, pgliteStorage, setupHierarchy, system } from "./Support.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const next = (expression: string, after: string) =>
  DateTime.formatIso(Result.getOrThrow(VersionSchedule.nextScheduledAt(expression, at(after))))

describe("nextScheduledAt", () => {
  it("crosses month ends: the 31st skips short months, the 1st follows December 31", () => {
    assert.strictEqual(next("0 0 31 * *", "2026-01-31T00:00:00Z"), "2026-03-31T00:00:00.000Z")
    assert.strictEqual(next("0 0 1 * *", "2026-12-31T23:59:00Z"), "2027-01-01T00:00:00.000Z")
    assert.strictEqual(next("0 0 29 2 *", "2026-03-01T00:00:00Z"), "2028-02-29T00:00:00.000Z")
  })
  it("is evaluated in UTC, so DST changes do not move it", () => {
    // US DST starts 2026-03-08, EU DST 2026-03-29, EU DST ends 2026-10-25.
    assert.strictEqual(next("30 1 * * *", "2026-03-08T01:30:00Z"), "2026-03-09T01:30:00.000Z")
    assert.strictEqual(next("30 2 * * *", "2026-03-29T00:00:00Z"), "2026-03-29T02:30:00.000Z")
    assert.strictEqual(next("0 1 * * *", "2026-10-25T00:30:00Z"), "2026-10-25T01:00:00.000Z")
    assert.strictEqual(next("0 1 * * *", "2026-10-25T01:00:00Z"), "2026-10-26T01:00:00.000Z")
  })
})

const ref = { organization: "acme", environment: "prod", package: "sales", version: "1.0.0" }

// Records each refresh the sweep starts.
const refreshed: Array<string> = []
const materializer = Layer.succeed(BuildPlan.Materializer, BuildPlan.Materializer.of({
  materialize: (_version, node) =>
    Effect.sync(() => {
      refreshed.push(node.sourceId)
      return undefined
    })
}))

const app = Layer.mergeAll(packageService, Schedules.layerRefresh.pipe(Layer.provide(materializer))).pipe(
  Layer.provideMerge(WorkflowEngine.layerMemory),
  Layer.provideMerge(pgliteStorage)
)

const declare = (declarations: PackageVersion.Materialization, patch: Partial<PackageVersion.VersionRecord>) =>
  Effect.gen(function*() {
    const versions = yield* VersionRepo.VersionRepo
    yield* versions.save({ ...(yield* versions.get(ref)), declarations, ...patch })
  })

describe("schedule sweep", () => {
  // The storage is built on the live clock; only the test body runs on a TestClock.
  it.live("fires a due schedule once, a missed tick during downtime once, and evaluates freshness", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-05-31T09:00:00Z").epochMilliseconds)
      yield* setupHierarchy
      const packages = yield* PackageService.PackageService
      const versions = yield* VersionRepo.VersionRepo
      yield* packages.createPackage(system, ref, { name: "sales" })
      yield* packages.publish(system, ref, "1.0.0", packageFiles())
      const plan = { nodes: [{ sourceId: "model.malloy#orders", name: "orders", connectionName: "pg", modelPath: "model.malloy" }], edges: [] }
      yield* declare(
        { ...PackageVersion.noMaterialization, scope: "version", materializationSchedule: "0 * * * *" },
        { nextScheduledAt: at("2026-05-31T10:00:00Z"), materialization: "succeeded", buildPlan: plan }
      )

      // 09:30: not due yet.
      yield* TestClock.setTime(at("2026-05-31T09:30:00Z").epochMilliseconds)
      assert.deepStrictEqual(yield* Schedules.sweep, [])

      // Down from 09:30 to 14:20 across the month end: ticks 10:00..14:00 were missed; it fires once.
      yield* TestClock.setTime(at("2026-05-31T14:20:00Z").epochMilliseconds)
      assert.deepStrictEqual(yield* Schedules.sweep, [ref])
      const fired = yield* versions.get(ref)
      assert.strictEqual(DateTime.formatIso(fired.lastRefreshedAt ?? at("1970-01-01T00:00:00Z")), "2026-05-31T14:00:00.000Z")
      assert.strictEqual(DateTime.formatIso(fired.nextScheduledAt ?? at("1970-01-01T00:00:00Z")), "2026-05-31T15:00:00.000Z")
      // The refresh of that tick ran once (joined here), and a second sweep in the same hour fires nothing.
      yield* Schedules.Refresh.execute({ ...ref, tick: "2026-05-31T14:00:00.000Z" })
      assert.deepStrictEqual(refreshed, ["model.malloy#orders"])
      assert.deepStrictEqual(yield* Schedules.sweep, [])

      // Past midnight into June: the next tick is computed across the month end.
      yield* TestClock.setTime(at("2026-06-01T00:05:00Z").epochMilliseconds)
      yield* declare(
        { ...PackageVersion.noMaterialization, scope: "version", materializationSchedule: "0 * * * *" },
        { nextScheduledAt: at("2026-05-31T23:00:00Z") }
      )
      yield* Schedules.sweep
      assert.strictEqual(DateTime.formatIso((yield* versions.get(ref)).nextScheduledAt ?? at("1970-01-01T00:00:00Z")), "2026-06-01T01:00:00.000Z")

      // Freshness: a one-hour window over data last refreshed at 00:00 is stale after 01:00.
      yield* declare(
        { ...PackageVersion.noMaterialization, materializationFreshnessWindowSeconds: 3600, materializationFreshnessFallback: "stale_ok" },
        { lastRefreshedAt: at("2026-06-01T00:00:00Z"), nextScheduledAt: null }
      )
      yield* TestClock.setTime(at("2026-06-01T00:30:00Z").epochMilliseconds)
      yield* Schedules.sweep
      assert.isFalse((yield* versions.get(ref)).stale)
      yield* TestClock.setTime(at("2026-06-01T01:30:00Z").epochMilliseconds)
      yield* Schedules.sweep
      const stale = yield* versions.get(ref)
      assert.isTrue(stale.stale)
      assert.strictEqual(DateTime.formatIso(stale.staleSince ?? at("1970-01-01T00:00:00Z")), "2026-06-01T01:00:00.000Z")
      assert.deepStrictEqual(stale.staleReasons, ["FRESHNESS_WINDOW_EXCEEDED"])
    }).pipe(Effect.provide(TestClock.layer()), Effect.provide(app)), { timeout: 60_000 })
})
