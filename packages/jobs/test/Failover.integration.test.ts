import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { spawn, type ChildProcess } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { JobsCluster } from "@modelgate/jobs"
import { Storage } from "@modelgate/sql"
import * as CountedJob from "./fixtures/CountedJob.ts"
import { runnerPort, scratch } from "./Support.ts"

/** The Node that runs the tests (the repo's pinned Node 24 under `npm test`). */
const node = process.execPath
const runnerScript = join(import.meta.dirname, "fixtures/runner.ts")

/** Starts a runner process; resolves once it printed "ready"; killed (SIGKILL) when the scope closes. */
const startRunner = (url: string, name: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess, Error>((resume) => {
      const child = spawn(node, ["--conditions=@modelgate/source", runnerScript], {
        env: { ...process.env, DATABASE_URL: url, RUNNER_PORT: String(port), RUNNER_NAME: name },
        stdio: ["ignore", "pipe", "pipe"]
      })
      // Both streams are kept: Effect's runMain reports a failure on stdout.
      let output = ""
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line === "ready") resume(Effect.succeed(child))
        else output += `${line}\n`
      })
      child.on("exit", (code, signal) => resume(Effect.fail(new Error(`runner ${name} exited (${code ?? signal}): ${output}`))))
    }),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )

const jobs = Array.from({ length: 16 }, (_, i) => `job-${i}`)

describe("runners on PostgreSQL", () => {
  it.live("jobs spread over two runners; one is SIGKILLed mid-job; every job completes exactly once", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* scratch
      const client = Storage.layerPostgres({ url: Redacted.make(db.url), maxConnections: 4 })
      const context = yield* Layer.build(client)
      const sql = Context.get(context, SqlClient)
      yield* Effect.provideContext(CountedJob.tables, context)

      const a = yield* startRunner(db.url, "a", yield* runnerPort)
      const b = yield* startRunner(db.url, "b", yield* runnerPort)
      void a
      // Both runners registered before any job is sent, so the shards are spread over both.
      yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`.pipe(
        Effect.flatMap(([row]) => (row?.n ?? 0) >= 2 ? Effect.void : Effect.fail("waiting")),
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 })
      )
      yield* Effect.sleep("2 seconds")

      // Sent from a client-only member, stored before the call returns.
      const submit = Effect.forEach(jobs, (job) => CountedJob.CountedJob.execute({ job, workMillis: 4000 }, { discard: true }))
      yield* submit.pipe(
        Effect.provide(JobsCluster.layerClient({ timing: CountedJob.timing, shardsPerGroup: 30 })),
        Effect.provideContext(context)
      )

      // Kill b while it is in the middle of a job.
      yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM job_attempts WHERE runner = 'b'`.pipe(
        Effect.flatMap(([row]) => (row?.n ?? 0) > 0 ? Effect.void : Effect.fail("waiting")),
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 300 })
      )
      b.kill("SIGKILL")
      const killedAt = Date.now()
      const inFlightOnB = (yield* sql<{ readonly job: string }>`
        SELECT DISTINCT job FROM job_attempts WHERE runner = 'b' AND job NOT IN (SELECT job FROM job_effects)`).map((r) => r.job)
      assert.isAbove(inFlightOnB.length, 0)

      // Every job completes: within the lock timeout plus one job's work (and polling slack).
      const bound = Duration.toMillis(JobsCluster.failoverBound(CountedJob.timing)) + 4000 + 5000
      yield* sql<{ readonly n: number }>`SELECT count(DISTINCT job)::int AS n FROM job_effects`.pipe(
        Effect.flatMap(([row]) => (row?.n ?? 0) >= jobs.length ? Effect.void : Effect.fail("waiting")),
        Effect.retry({ schedule: Schedule.spaced("250 millis"), times: Math.ceil(bound / 250) })
      )
      const elapsed = Date.now() - killedAt
      assert.isBelow(elapsed, bound)

      // Exactly once: one effect row per job.
      const effects = yield* sql<{ readonly job: string; readonly n: number; readonly runner: string }>`
        SELECT job, count(*)::int AS n, min(runner) AS runner FROM job_effects GROUP BY job ORDER BY job`
      assert.deepStrictEqual(effects.map((e) => [e.job, e.n]), [...jobs].sort().map((j) => [j, 1]))
      // Spread: both runners attempted jobs; the jobs b was running finished on a.
      const attempts = yield* sql<{ readonly runner: string }>`SELECT DISTINCT runner FROM job_attempts ORDER BY runner`
      assert.deepStrictEqual(attempts.map((r) => r.runner), ["a", "b"])
      for (const job of inFlightOnB) assert.strictEqual(effects.find((e) => e.job === job)?.runner, "a")
      // Let a stop before the database is dropped.
      a.kill("SIGKILL")
    })), { timeout: 120_000 })
})
