import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Staleness } from "@modelgate/core"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const built = at("2025-03-01T00:00:00Z")
const hour = 3600

const artifact = (overrides: Partial<Staleness.Artifact> = {}): Staleness.Artifact => ({
  dataAsOf: built,
  freshnessWindowSeconds: hour,
  buildFailed: false,
  refreshInProgress: false,
  refreshDisarmed: false,
  estimatedBuildSeconds: null,
  ...overrides
})

const fresh: Staleness.ArtifactStaleness = { stale: false, staleSince: null, reasons: [] }

describe("Staleness.effectiveWindowSeconds (most specific wins)", () => {
  it("takes the most specific declared window over the package default", () =>
    assert.strictEqual(Staleness.effectiveWindowSeconds([600, 3600]), 600))
  it("falls back past undeclared levels to the package default", () =>
    assert.strictEqual(Staleness.effectiveWindowSeconds([null, undefined, 3600]), 3600))
  it("a declared window of 0 is a window, not an absence", () =>
    assert.strictEqual(Staleness.effectiveWindowSeconds([0, 3600]), 0))
  it("is null when nothing is declared", () => {
    assert.strictEqual(Staleness.effectiveWindowSeconds([null, undefined]), null)
    assert.strictEqual(Staleness.effectiveWindowSeconds([]), null)
  })
})

describe("Staleness.evaluateArtifact", () => {
  it("is fresh within its window", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact(), at("2025-03-01T00:30:00Z")), fresh))

  it("is still fresh exactly at the crossover (the age must pass the window)", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact(), at("2025-03-01T01:00:00Z")), fresh))

  it("is stale past the window, since the crossover dataAsOf + window", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact(), at("2025-03-01T01:00:01Z")), {
      stale: true,
      staleSince: at("2025-03-01T01:00:00Z"),
      reasons: ["FRESHNESS_WINDOW_EXCEEDED"]
    }))

  it("never ages without a window", () =>
    assert.deepStrictEqual(
      Staleness.evaluateArtifact(artifact({ freshnessWindowSeconds: null }), at("2030-01-01T00:00:00Z")),
      fresh
    ))

  it("never ages without data (nothing built yet)", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact({ dataAsOf: null }), at("2030-01-01T00:00:00Z")), fresh))

  it("a failed build is stale on its own, with no age-based crossover", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact({ buildFailed: true }), at("2025-03-01T00:10:00Z")), {
      stale: true,
      staleSince: null,
      reasons: ["SOURCE_BUILD_FAILED"]
    }))

  it("a failed build past its window has both gating reasons and the crossover", () =>
    assert.deepStrictEqual(Staleness.evaluateArtifact(artifact({ buildFailed: true }), at("2025-03-02T00:00:00Z")), {
      stale: true,
      staleSince: at("2025-03-01T01:00:00Z"),
      reasons: ["FRESHNESS_WINDOW_EXCEEDED", "SOURCE_BUILD_FAILED"]
    }))

  describe("annotations never make a fresh artifact stale", () => {
    it.each([
      ["a refresh in progress", { refreshInProgress: true }],
      ["a disarmed refresh stream", { refreshDisarmed: true }],
      ["a window below the build time", { estimatedBuildSeconds: 2 * hour }],
      ["all three", { refreshInProgress: true, refreshDisarmed: true, estimatedBuildSeconds: 2 * hour }]
    ] as const)("%s", (_, overrides) =>
      assert.deepStrictEqual(Staleness.evaluateArtifact(artifact(overrides), at("2025-03-01T00:30:00Z")), fresh))
  })

  describe("annotations explain an already-stale artifact", () => {
    const late = at("2025-03-01T05:00:00Z")
    const reasonsOf = (overrides: Partial<Staleness.Artifact>) => Staleness.evaluateArtifact(artifact(overrides), late).reasons

    it("REFRESH_IN_PROGRESS while a fired refresh has not landed", () =>
      assert.deepStrictEqual(reasonsOf({ refreshInProgress: true }), ["FRESHNESS_WINDOW_EXCEEDED", "REFRESH_IN_PROGRESS"]))
    it("LAST_REFRESH_FAILED once the refresh stream is disarmed", () =>
      assert.deepStrictEqual(reasonsOf({ refreshDisarmed: true }), ["FRESHNESS_WINDOW_EXCEEDED", "LAST_REFRESH_FAILED"]))
    it("a disarmed stream has no refresh in progress", () =>
      assert.deepStrictEqual(
        reasonsOf({ refreshDisarmed: true, refreshInProgress: true }),
        ["FRESHNESS_WINDOW_EXCEEDED", "LAST_REFRESH_FAILED"]
      ))
    it("WINDOW_BELOW_BUILD_TIME when the window is shorter than the estimated build", () =>
      assert.deepStrictEqual(
        reasonsOf({ estimatedBuildSeconds: hour + 1 }),
        ["FRESHNESS_WINDOW_EXCEEDED", "WINDOW_BELOW_BUILD_TIME"]
      ))
    it("not when the window equals the estimated build, nor when the estimate is unknown", () => {
      assert.deepStrictEqual(reasonsOf({ estimatedBuildSeconds: hour }), ["FRESHNESS_WINDOW_EXCEEDED"])
      assert.deepStrictEqual(reasonsOf({ estimatedBuildSeconds: null }), ["FRESHNESS_WINDOW_EXCEEDED"])
    })
    it("not without a window (a failed build with no declared freshness)", () =>
      assert.deepStrictEqual(
        reasonsOf({ freshnessWindowSeconds: null, buildFailed: true, estimatedBuildSeconds: 10 * hour }),
        ["SOURCE_BUILD_FAILED"]
      ))
    it("lists every reason in spec order", () =>
      assert.deepStrictEqual(
        reasonsOf({ buildFailed: true, refreshInProgress: true, estimatedBuildSeconds: 2 * hour }),
        ["FRESHNESS_WINDOW_EXCEEDED", "SOURCE_BUILD_FAILED", "REFRESH_IN_PROGRESS", "WINDOW_BELOW_BUILD_TIME"]
      ))
  })
})

describe("Staleness version roll-up", () => {
  const now = at("2025-03-02T00:00:00Z")

  it("a version without artifacts is fresh", () =>
    assert.deepStrictEqual(Staleness.evaluateVersion([], now), { stale: false, staleSince: null, staleReasons: [] }))

  it("fresh artifacts with annotation flags leave the version fresh with no reasons", () =>
    assert.deepStrictEqual(
      Staleness.evaluateVersion([
        artifact({ dataAsOf: at("2025-03-01T23:30:00Z"), refreshInProgress: true }),
        artifact({ dataAsOf: at("2025-03-01T23:30:00Z"), refreshDisarmed: true, estimatedBuildSeconds: 9 * hour })
      ], now),
      { stale: false, staleSince: null, staleReasons: [] }
    ))

  it("annotation reasons never make a version stale alone, even if an artifact claims stale", () =>
    assert.deepStrictEqual(
      Staleness.rollUp([
        { stale: true, staleSince: at("2025-01-01T00:00:00Z"), reasons: ["REFRESH_IN_PROGRESS", "LAST_REFRESH_FAILED"] },
        { stale: true, staleSince: null, reasons: ["WINDOW_BELOW_BUILD_TIME"] }
      ]),
      { stale: false, staleSince: null, staleReasons: [] }
    ))

  it("stale is the OR over artifacts: one stale artifact is enough", () => {
    const rolled = Staleness.evaluateVersion([artifact({ dataAsOf: at("2025-03-01T23:30:00Z") }), artifact()], now)
    assert.isTrue(rolled.stale)
    assert.deepStrictEqual(rolled.staleReasons, ["FRESHNESS_WINDOW_EXCEEDED"])
  })

  it("staleSince is the earliest crossover across stale artifacts", () =>
    assert.deepStrictEqual(
      Staleness.evaluateVersion([
        artifact({ dataAsOf: at("2025-03-01T10:00:00Z") }), // crosses 11:00
        artifact({ dataAsOf: at("2025-03-01T08:00:00Z"), freshnessWindowSeconds: 2 * hour }), // crosses 10:00
        artifact({ dataAsOf: at("2025-03-01T06:00:00Z"), freshnessWindowSeconds: 6 * hour }) // crosses 12:00
      ], now).staleSince,
      at("2025-03-01T10:00:00Z")
    ))

  it("a fresh artifact's crossover does not count", () =>
    assert.deepStrictEqual(
      Staleness.rollUp([
        { stale: false, staleSince: at("2025-01-01T00:00:00Z"), reasons: [] },
        { stale: true, staleSince: at("2025-03-01T01:00:00Z"), reasons: ["FRESHNESS_WINDOW_EXCEEDED"] }
      ]).staleSince,
      at("2025-03-01T01:00:00Z")
    ))

  it("staleSince is null when no stale artifact is age-based", () =>
    assert.deepStrictEqual(
      Staleness.evaluateVersion([artifact({ buildFailed: true, freshnessWindowSeconds: null }), artifact({ dataAsOf: now })], now),
      { stale: true, staleSince: null, staleReasons: ["SOURCE_BUILD_FAILED"] }
    ))

  it("staleSince comes from the age-based artifact when another is stale by a failed build", () =>
    assert.deepStrictEqual(
      Staleness.evaluateVersion([
        artifact({ buildFailed: true, freshnessWindowSeconds: null }),
        artifact({ dataAsOf: at("2025-03-01T20:00:00Z") })
      ], now),
      {
        stale: true,
        staleSince: at("2025-03-01T21:00:00Z"),
        staleReasons: ["FRESHNESS_WINDOW_EXCEEDED", "SOURCE_BUILD_FAILED"]
      }
    ))

  it("staleReasons is the union, without duplicates, in spec order", () =>
    assert.deepStrictEqual(
      Staleness.evaluateVersion([
        artifact({ estimatedBuildSeconds: 2 * hour }),
        artifact({ refreshDisarmed: true }),
        artifact({ buildFailed: true, freshnessWindowSeconds: null, refreshInProgress: true }),
        artifact()
      ], now).staleReasons,
      [
        "FRESHNESS_WINDOW_EXCEEDED",
        "SOURCE_BUILD_FAILED",
        "REFRESH_IN_PROGRESS",
        "LAST_REFRESH_FAILED",
        "WINDOW_BELOW_BUILD_TIME"
      ]
    ))

  it.effect("evaluateVersionNow reads the Clock: fresh before the crossover, stale after", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(built))
      const artifacts = [artifact()]
      yield* TestClock.adjust("59 minutes")
      assert.isFalse((yield* Staleness.evaluateVersionNow(artifacts)).stale)
      yield* TestClock.adjust("2 minutes")
      assert.deepStrictEqual(yield* Staleness.evaluateVersionNow(artifacts), {
        stale: true,
        staleSince: at("2025-03-01T01:00:00Z"),
        staleReasons: ["FRESHNESS_WINDOW_EXCEEDED"]
      })
    }))
})

describe("Staleness schemas", () => {
  it("gating and annotation reasons partition the reasons", () => {
    assert.deepStrictEqual(
      [...Staleness.gatingReasons, ...Staleness.annotationReasons].toSorted(),
      [...Staleness.staleReasons].toSorted()
    )
    assert.isTrue(Staleness.isGating("FRESHNESS_WINDOW_EXCEEDED"))
    assert.isTrue(Staleness.isGating("SOURCE_BUILD_FAILED"))
    assert.isFalse(Staleness.isGating("REFRESH_IN_PROGRESS"))
    assert.isFalse(Staleness.isGating("LAST_REFRESH_FAILED"))
    assert.isFalse(Staleness.isGating("WINDOW_BELOW_BUILD_TIME"))
  })
  it("StaleReason accepts the five reasons only", () => {
    for (const reason of Staleness.staleReasons) assert.isTrue(Schema.is(Staleness.StaleReason)(reason))
    assert.isFalse(Schema.is(Staleness.StaleReason)("STALE"))
  })
  it("FreshnessFallback is live, stale_ok or fail", () => {
    for (const value of ["live", "stale_ok", "fail"]) assert.isTrue(Schema.is(Staleness.FreshnessFallback)(value))
    for (const value of ["LIVE", "stale-ok", "", null]) assert.isFalse(Schema.is(Staleness.FreshnessFallback)(value))
  })
})
