import { assert, describe, it } from "@effect/vitest"
import { PackageRepo, PackageService, VersionRepo } from "@modelgate/core"
import { Context, Cron, DateTime, Effect, Layer, Redacted, Schedule } from "effect"
import { ClusterCron } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { JobsCluster, Schedules } from "@modelgate/jobs"
import { Storage } from "@modelgate/sql"
import { timing } from "./fixtures/CountedJob.ts"
import { packageFiles, packageService, pgliteStorage, runnerPort, scratch, setupHierarchy, system } from "./Support.ts"

const everySecond = Cron.parseUnsafe("* * * * * *", "UTC")

/** Records the scheduled time of each run and the runner that ran it. */
const recordTick = (runner: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const tick = DateTime.formatIso(yield* ClusterCron.CurrentScheduledTime)
    yield* sql`INSERT INTO cron_ticks (tick, runner) VALUES (${tick}, ${runner})`
  }).pipe(Effect.orDie)

/** A runner of the cluster on the database of `url`, with the cron job recording its ticks. */
const runner = (url: string, name: string, port: number) =>
  Schedules.layerCronWith(everySecond, recordTick(name), "test/Ticks").pipe(
    Layer.provideMerge(JobsCluster.layerRunner({ host: "127.0.0.1", port, timing, shardsPerGroup: 30 })),
    Layer.provideMerge(Storage.layerPostgres({ url: Redacted.make(url), maxConnections: 4 }))
  )

describe("the schedule cron", () => {
  it.live("on two runners sharing PostgreSQL, each tick runs exactly once", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* scratch
      const admin = yield* Layer.build(Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 2 }))
      const sql = Context.get(admin, SqlClient)
      yield* sql`CREATE TABLE cron_ticks (tick text NOT NULL, runner text NOT NULL)`
      // Two members of the cluster, each with its own pool and socket: the cron is registered on both.
      yield* Layer.build(runner(db.url, "a", yield* runnerPort))
      yield* Layer.build(runner(db.url, "b", yield* runnerPort))
      yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`.pipe(
        Effect.flatMap(([row]) => (row?.n ?? 0) >= 2 ? Effect.void : Effect.fail("waiting")),
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 })
      )
      // Wait for eight distinct ticks, then one more second for any duplicate run to land.
      yield* sql<{ readonly n: number }>`SELECT count(DISTINCT tick)::int AS n FROM cron_ticks`.pipe(
        Effect.flatMap(([row]) => (row?.n ?? 0) >= 8 ? Effect.void : Effect.fail("waiting")),
        Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 160 })
      )
      yield* Effect.sleep("1 second")
      const runs = yield* sql<{ readonly tick: string; readonly n: number }>`
        SELECT tick, count(*)::int AS n FROM cron_ticks GROUP BY tick ORDER BY tick`
      assert.isAtLeast(runs.length, 8)
      assert.deepStrictEqual(runs.filter((r) => r.n !== 1), [], JSON.stringify(runs))
      // Ticks are whole seconds of the schedule: no run happened off it.
      for (const r of runs) assert.strictEqual(DateTime.makeUnsafe(r.tick).epochMilliseconds % 1000, 0, r.tick)
      // Both runners were members: the one owning the cron's entity ran them (possibly after a handover).
      const members = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`
      assert.strictEqual(members[0]?.n, 2)
    })), { timeout: 90_000 })

  it.live("on one embedded runner, the cron's tick archives an expired demoted version", () =>
    Effect.gen(function*() {
      yield* setupHierarchy
      const packages = yield* PackageService.PackageService
      const versions = yield* VersionRepo.VersionRepo
      const repo = yield* PackageRepo.PackageRepo
      const env = { organization: "acme", environment: "prod" }
      const ref = { ...env, package: "sales" }
      yield* packages.createPackage(system, env, { name: "sales", archiveDemotedAfterSeconds: 60 })
      yield* packages.publish(system, ref, "1.0.0", packageFiles())
      yield* packages.publish(system, ref, "1.0.1", packageFiles())
      const now = yield* DateTime.now
      const old = yield* versions.get({ ...ref, version: "1.0.0" })
      yield* versions.save({ ...old, promotedAt: DateTime.subtract(now, { hours: 2 }), demotedAt: DateTime.subtract(now, { hours: 1 }) })
      yield* repo.save({ ...(yield* repo.get(ref)), latestVersionId: "1.0.1" })
      // The real tick, every second, on a single runner: archived within a few ticks.
      yield* Layer.build(Schedules.layerCronWith(everySecond, Schedules.tick).pipe(Layer.provide(JobsCluster.layerSingle({ timing }))))
      yield* Effect.flatMap(versions.get({ ...ref, version: "1.0.0" }), (v) => v.archiveStatus === "archive" ? Effect.void : Effect.fail("waiting")).pipe(
        Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 120 })
      )
      assert.strictEqual((yield* versions.get({ ...ref, version: "1.0.1" })).archiveStatus, "unarchive")
    }).pipe(Effect.scoped, Effect.provide(packageService.pipe(Layer.provideMerge(pgliteStorage)))), { timeout: 90_000 })
})
