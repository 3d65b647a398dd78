import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Errors, IndexingStatus } from "@modelgate/core"

type Status = IndexingStatus.IndexingStatus
type Kind = IndexingStatus.IndexingEventKind
type Progress = IndexingStatus.ConnectionIndexingProgress

const t0 = DateTime.makeUnsafe("2025-01-01T00:00:00Z")
const now = DateTime.makeUnsafe("2025-01-01T01:00:00Z")

const stored: Progress = {
  schemaProgress: {
    tablesTotal: 10,
    tablesProcessing: 2,
    tablesCompleted: 8,
    tablesFailed: 0,
    columnsTotal: 120,
    columnsCompleted: 90
  }
}
const reported: Progress = {
  ...stored,
  modelSuggestionsProgress: {
    tablesTotal: 10,
    tablesProcessing: 1,
    tablesCompleted: 3,
    tablesFailed: 0,
    joinWorkTotal: 50,
    joinWorkCompleted: 12,
    joinsGenerated: 4,
    dimensionsGenerated: null,
    measuresGenerated: 7
  }
}

const eventOf = (kind: Kind): IndexingStatus.IndexingEvent =>
  kind === "progressed" ? { _tag: "progressed", progress: reported } : { _tag: kind }

// What happens to indexingProgress: cleared to null, kept as stored, or replaced by the event's.
type ProgressOutcome = "null" | "kept" | "event"
type Row = readonly [Status, Kind, Status | "illegal", ProgressOutcome]

const S = "SCHEMA_INDEXING"
const M = "MODEL_SUGGESTION_INDEXING"

// Every status x every event, written out by hand.
const table: ReadonlyArray<Row> = [
  ["UNKNOWN", "created", "illegal", "null"],
  ["UNKNOWN", "started", S, "null"],
  ["UNKNOWN", "progressed", "illegal", "null"],
  ["UNKNOWN", "schemaFinished", "illegal", "null"],
  ["UNKNOWN", "schemaFailed", "illegal", "null"],
  ["UNKNOWN", "suggestionsFailed", "illegal", "null"],
  ["UNKNOWN", "bothFinished", "illegal", "null"],
  ["UNKNOWN", "updated", "UNKNOWN", "null"],
  ["UNKNOWN", "excluded", "SKIPPED", "null"],

  [S, "created", "illegal", "null"],
  [S, "started", "illegal", "null"],
  [S, "progressed", S, "event"],
  [S, "schemaFinished", M, "kept"],
  [S, "schemaFailed", "FAILED", "null"],
  [S, "suggestionsFailed", "illegal", "null"],
  [S, "bothFinished", "illegal", "null"],
  [S, "updated", "RETRY", "null"],
  [S, "excluded", "illegal", "null"],

  [M, "created", "illegal", "null"],
  [M, "started", "illegal", "null"],
  [M, "progressed", M, "event"],
  [M, "schemaFinished", "illegal", "null"],
  [M, "schemaFailed", "illegal", "null"],
  [M, "suggestionsFailed", "FAILED", "null"],
  [M, "bothFinished", "INDEXED", "null"],
  [M, "updated", "RETRY", "null"],
  [M, "excluded", "illegal", "null"],

  ["INDEXED", "created", "illegal", "null"],
  ["INDEXED", "started", S, "null"],
  ["INDEXED", "progressed", "illegal", "null"],
  ["INDEXED", "schemaFinished", "illegal", "null"],
  ["INDEXED", "schemaFailed", "illegal", "null"],
  ["INDEXED", "suggestionsFailed", "illegal", "null"],
  ["INDEXED", "bothFinished", "illegal", "null"],
  ["INDEXED", "updated", "UNKNOWN", "null"],
  ["INDEXED", "excluded", "SKIPPED", "null"],

  ["FAILED", "created", "illegal", "null"],
  ["FAILED", "started", S, "null"],
  ["FAILED", "progressed", "illegal", "null"],
  ["FAILED", "schemaFinished", "illegal", "null"],
  ["FAILED", "schemaFailed", "illegal", "null"],
  ["FAILED", "suggestionsFailed", "illegal", "null"],
  ["FAILED", "bothFinished", "illegal", "null"],
  ["FAILED", "updated", "UNKNOWN", "null"],
  ["FAILED", "excluded", "SKIPPED", "null"],

  ["RETRY", "created", "illegal", "null"],
  ["RETRY", "started", S, "null"],
  ["RETRY", "progressed", "RETRY", "null"],
  ["RETRY", "schemaFinished", "RETRY", "null"],
  ["RETRY", "schemaFailed", S, "null"],
  ["RETRY", "suggestionsFailed", S, "null"],
  ["RETRY", "bothFinished", S, "null"],
  ["RETRY", "updated", "RETRY", "null"],
  ["RETRY", "excluded", "SKIPPED", "null"],

  ["SKIPPED", "created", "illegal", "null"],
  ["SKIPPED", "started", "illegal", "null"],
  ["SKIPPED", "progressed", "illegal", "null"],
  ["SKIPPED", "schemaFinished", "illegal", "null"],
  ["SKIPPED", "schemaFailed", "illegal", "null"],
  ["SKIPPED", "suggestionsFailed", "illegal", "null"],
  ["SKIPPED", "bothFinished", "illegal", "null"],
  ["SKIPPED", "updated", "UNKNOWN", "null"],
  ["SKIPPED", "excluded", "SKIPPED", "null"]
]

describe("IndexingStatus transition table: every status x every event", () => {
  it("covers the full product exactly once", () => {
    const keys = new Set(table.map(([from, kind]) => `${from}/${kind}`))
    assert.strictEqual(keys.size, table.length)
    assert.strictEqual(table.length, IndexingStatus.indexingStatuses.length * IndexingStatus.indexingEventKinds.length)
  })

  it.each(table)("%s + %s -> %s (progress %s)", (from, kind, to, progress) => {
    // The stored progress is non-null in every state, so a transition that must
    // clear it cannot pass by accident.
    const snapshot: IndexingStatus.IndexingSnapshot = {
      indexingStatus: from,
      indexingStatusLastUpdated: t0,
      indexingProgress: stored
    }
    const result = IndexingStatus.transition(snapshot, eventOf(kind), now)
    if (to === "illegal") {
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.instanceOf(result.failure, Errors.IllegalTransition)
        assert.strictEqual(result.failure.code, "CONFLICT")
        assert.strictEqual(result.failure.machine, "IndexingStatus")
        assert.strictEqual(result.failure.from, from)
        assert.strictEqual(result.failure.event, kind)
      }
      return
    }
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) {
      const next = result.success
      assert.strictEqual(next.indexingStatus, to)
      // indexingStatusLastUpdated says when the status last changed.
      assert.deepStrictEqual(next.indexingStatusLastUpdated, to === from ? t0 : now)
      const expectedProgress = progress === "null" ? null : progress === "kept" ? stored : reported
      assert.deepStrictEqual(next.indexingProgress, expectedProgress)
    }
  })
})

const run = (snapshot: IndexingStatus.IndexingSnapshot, kinds: ReadonlyArray<Kind>, at: DateTime.Utc) =>
  kinds.reduce<Result.Result<IndexingStatus.IndexingSnapshot, Errors.IllegalTransition>>(
    (acc, kind) => Result.flatMap(acc, (s) => IndexingStatus.transition(s, eventOf(kind), at)),
    Result.succeed(snapshot)
  )

const statusAfter = (kinds: ReadonlyArray<Kind>) =>
  Result.map(run(IndexingStatus.create(t0), kinds, now), (s) => s.indexingStatus)

describe("IndexingStatus scenarios", () => {
  it("a new connection is UNKNOWN (queued), stamped, without progress", () =>
    assert.deepStrictEqual(IndexingStatus.create(t0), {
      indexingStatus: "UNKNOWN",
      indexingStatusLastUpdated: t0,
      indexingProgress: null
    }))

  it("the normal run ends INDEXED with indexingProgress null", () => {
    const result = run(IndexingStatus.create(t0), ["started", "progressed", "schemaFinished", "progressed", "bothFinished"], now)
    assert.deepStrictEqual(result, Result.succeed({ indexingStatus: "INDEXED", indexingStatusLastUpdated: now, indexingProgress: null }))
  })

  it("an update while indexing runs re-indexes when the current job finishes, instead of landing INDEXED", () => {
    assert.deepStrictEqual(statusAfter(["started", "schemaFinished", "updated", "bothFinished"]), Result.succeed(S))
    assert.deepStrictEqual(
      statusAfter(["started", "schemaFinished", "updated", "bothFinished", "schemaFinished", "bothFinished"]),
      Result.succeed("INDEXED")
    )
  })

  it("an update during schema indexing keeps RETRY through the job's second pipeline", () =>
    assert.deepStrictEqual(statusAfter(["started", "updated", "schemaFinished", "progressed"]), Result.succeed("RETRY")))

  it("a failure of the superseded job restarts rather than landing FAILED", () =>
    assert.deepStrictEqual(statusAfter(["started", "updated", "schemaFailed"]), Result.succeed(S)))

  it("updating an indexed or failed connection queues it again", () => {
    assert.deepStrictEqual(statusAfter(["started", "schemaFinished", "bothFinished", "updated"]), Result.succeed("UNKNOWN"))
    assert.deepStrictEqual(statusAfter(["started", "schemaFailed", "updated"]), Result.succeed("UNKNOWN"))
  })

  it("an excluded connection is SKIPPED and only an update re-queues it", () => {
    assert.deepStrictEqual(statusAfter(["excluded"]), Result.succeed("SKIPPED"))
    assert.isTrue(Result.isFailure(statusAfter(["excluded", "started"])))
    assert.deepStrictEqual(statusAfter(["excluded", "updated", "started"]), Result.succeed(S))
  })

  it("progress reports do not move indexingStatusLastUpdated", () => {
    const started = run(IndexingStatus.create(t0), ["started"], now)
    const later = DateTime.makeUnsafe("2025-01-01T02:00:00Z")
    const reportedLater = Result.flatMap(started, (s) => IndexingStatus.transition(s, eventOf("progressed"), later))
    assert.deepStrictEqual(
      reportedLater,
      Result.succeed({ indexingStatus: S, indexingStatusLastUpdated: now, indexingProgress: reported })
    )
  })
})

describe("IndexingStatus progress visibility", () => {
  const shown: ReadonlyArray<readonly [Status, boolean]> = [
    ["UNKNOWN", false],
    ["SCHEMA_INDEXING", true],
    ["INDEXED", false],
    ["SKIPPED", false],
    ["FAILED", false],
    ["RETRY", false],
    ["MODEL_SUGGESTION_INDEXING", true]
  ]
  it.each(shown)("%s shows progress: %s", (status, visible) => {
    assert.strictEqual(IndexingStatus.showsProgress(status), visible)
    const snapshot = { indexingStatus: status, indexingStatusLastUpdated: t0, indexingProgress: stored }
    assert.deepStrictEqual(IndexingStatus.progressForRead(snapshot), visible ? stored : null)
  })
})

describe("IndexingStatus with the Clock", () => {
  it.effect("createNow and transitionNow stamp the TestClock's time", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(t0))
      const created = yield* IndexingStatus.createNow
      assert.deepStrictEqual(created.indexingStatusLastUpdated, t0)
      yield* TestClock.adjust("90 minutes")
      const started = yield* IndexingStatus.transitionNow(created, { _tag: "started" })
      assert.deepStrictEqual(started.indexingStatusLastUpdated, DateTime.makeUnsafe("2025-01-01T01:30:00Z"))
      yield* TestClock.adjust("1 hour")
      const progressed = yield* IndexingStatus.transitionNow(started, { _tag: "progressed", progress: reported })
      assert.deepStrictEqual(progressed.indexingStatusLastUpdated, DateTime.makeUnsafe("2025-01-01T01:30:00Z"))
    }))

  it.effect("transitionNow fails with IllegalTransition", () =>
    Effect.gen(function*() {
      const error = yield* IndexingStatus.transitionNow(IndexingStatus.create(t0), { _tag: "bothFinished" }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "IllegalTransition")
      assert.strictEqual(error.from, "UNKNOWN")
    }))
})

describe("IndexingStatus schemas", () => {
  it("IndexingStatus accepts the seven statuses", () => {
    for (const status of IndexingStatus.indexingStatuses) assert.isTrue(Schema.is(IndexingStatus.IndexingStatus)(status))
    assert.strictEqual(IndexingStatus.indexingStatuses.length, 7)
    assert.isFalse(Schema.is(IndexingStatus.IndexingStatus)("INDEXING"))
    assert.isFalse(Schema.is(IndexingStatus.IndexingStatus)(null))
  })

  it("ConnectionIndexingProgress accepts either pipeline, both, or neither", () => {
    const is = Schema.is(IndexingStatus.ConnectionIndexingProgress)
    assert.isTrue(is({}))
    assert.isTrue(is(stored))
    assert.isTrue(is(reported))
    assert.isTrue(is({ modelSuggestionsProgress: reported.modelSuggestionsProgress }))
  })

  it("column sums are null until counts are recorded", () => {
    const is = Schema.is(IndexingStatus.SchemaIndexingProgress)
    const base = { tablesTotal: 3, tablesProcessing: 3, tablesCompleted: 0, tablesFailed: 0 }
    assert.isTrue(is({ ...base, columnsTotal: null, columnsCompleted: null }))
    assert.isFalse(is({ ...base, columnsTotal: 1.5, columnsCompleted: null }))
    assert.isFalse(is({ ...base, tablesTotal: null, columnsTotal: null, columnsCompleted: null }))
    assert.isFalse(is({ ...base, tablesFailed: -1, columnsTotal: null, columnsCompleted: null }))
  })

  it("model-suggestion counters are nullable integers; table counts are required integers", () => {
    const is = Schema.is(IndexingStatus.ModelSuggestionsIndexingProgress)
    const base = {
      tablesTotal: 1,
      tablesProcessing: 0,
      tablesCompleted: 1,
      tablesFailed: 0,
      joinWorkTotal: null,
      joinWorkCompleted: null,
      joinsGenerated: null,
      dimensionsGenerated: null,
      measuresGenerated: null
    }
    assert.isTrue(is(base))
    assert.isTrue(is({ ...base, joinsGenerated: 3, joinWorkTotal: 10, joinWorkCompleted: 10 }))
    assert.isFalse(is({ ...base, measuresGenerated: 0.5 }))
    assert.isFalse(is({ ...base, tablesCompleted: null }))
  })
})
