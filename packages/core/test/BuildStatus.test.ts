import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { BuildStatus } from "@modelgate/core"

type M = BuildStatus.MaterializationState
type I = BuildStatus.IndexingState
type B = BuildStatus.BuildStatus

// The full input product, written out by hand from the spec's ordered rules so the
// test does not reuse the implementation's logic. Columns: indexing pending,
// running, succeeded, failed.
const expected: Record<M, Record<I, B>> = {
  none: { pending: "BUILDING", running: "BUILDING", succeeded: "READY", failed: "FAILED" },
  pending: { pending: "BUILDING", running: "BUILDING", succeeded: "BUILDING", failed: "FAILED" },
  running: { pending: "BUILDING", running: "BUILDING", succeeded: "BUILDING", failed: "FAILED" },
  succeeded: { pending: "BUILDING", running: "BUILDING", succeeded: "READY", failed: "FAILED" },
  failed: { pending: "FAILED", running: "FAILED", succeeded: "FAILED", failed: "FAILED" },
  unsupported: { pending: "BUILDING", running: "BUILDING", succeeded: "UNSUPPORTED", failed: "FAILED" }
}

const product = BuildStatus.materializationStates.flatMap((materialization) =>
  BuildStatus.indexingStates.map((indexing) => [materialization, indexing, expected[materialization][indexing]] as const)
)

describe("BuildStatus.derive over the full input product", () => {
  it("the product has every pair", () => assert.strictEqual(product.length, 6 * 4))
  it.each(product)("materialization %s, indexing %s -> %s", (materialization, indexing, status) =>
    assert.strictEqual(BuildStatus.derive({ materialization, indexing }), status))
})

describe("BuildStatus precedence (each rule beats the ones after it)", () => {
  it("1 FAILED beats 2 BUILDING: a failed side wins while the other still works", () => {
    assert.strictEqual(BuildStatus.derive({ materialization: "failed", indexing: "running" }), "FAILED")
    assert.strictEqual(BuildStatus.derive({ materialization: "running", indexing: "failed" }), "FAILED")
  })
  it("1 FAILED beats 3 UNSUPPORTED: failed indexing on an unsupported version", () =>
    assert.strictEqual(BuildStatus.derive({ materialization: "unsupported", indexing: "failed" }), "FAILED"))
  it("2 BUILDING beats 3 UNSUPPORTED: UNSUPPORTED needs indexing settled", () =>
    assert.strictEqual(BuildStatus.derive({ materialization: "unsupported", indexing: "pending" }), "BUILDING"))
  it("3 UNSUPPORTED beats 4 READY", () =>
    assert.strictEqual(BuildStatus.derive({ materialization: "unsupported", indexing: "succeeded" }), "UNSUPPORTED"))
  it("4 READY needs both sides at rest; no persist source counts as at rest", () => {
    assert.strictEqual(BuildStatus.derive({ materialization: "succeeded", indexing: "succeeded" }), "READY")
    assert.strictEqual(BuildStatus.derive({ materialization: "none", indexing: "succeeded" }), "READY")
  })
})

describe("BuildStatus.materializationOf", () => {
  const cases: ReadonlyArray<readonly [ReadonlyArray<BuildStatus.SourceMaterialization>, M]> = [
    [[], "none"],
    [["succeeded"], "succeeded"],
    [["succeeded", "succeeded"], "succeeded"],
    [["pending"], "pending"],
    [["pending", "succeeded"], "pending"],
    [["pending", "running"], "running"],
    [["running", "unsupported"], "running"],
    [["unsupported"], "unsupported"],
    // One source serving live is enough for the version to be UNSUPPORTED.
    [["succeeded", "unsupported"], "unsupported"],
    // A failure wins over everything, including work still in progress.
    [["running", "failed", "unsupported"], "failed"],
    [["succeeded", "failed"], "failed"]
  ]
  it.each(cases)("%j -> %s", (sources, state) => assert.strictEqual(BuildStatus.materializationOf(sources), state))
})

describe("BuildStatus helpers", () => {
  it.each([["READY", true], ["UNSUPPORTED", true], ["BUILDING", false], ["FAILED", false]] as const)(
    "%s is a servable resting state: %s",
    (status, servable) => assert.strictEqual(BuildStatus.isServable(status), servable)
  )
  it.each([["pending", false], ["running", true], ["succeeded", false], ["failed", false]] as const)(
    "indexing %s shows indexingProgress: %s",
    (indexing, shown) => assert.strictEqual(BuildStatus.showsIndexingProgress(indexing), shown)
  )
})

describe("BuildStatus schemas", () => {
  it("BuildStatus accepts exactly the four values", () => {
    for (const value of ["BUILDING", "READY", "FAILED", "UNSUPPORTED"]) {
      assert.isTrue(Schema.is(BuildStatus.BuildStatus)(value))
    }
    for (const value of ["ready", "", "PENDING", null]) assert.isFalse(Schema.is(BuildStatus.BuildStatus)(value))
  })

  const progress = { sourcesTotal: 4, sourcesProcessing: 1, sourcesCompleted: 2, sourcesFailed: 1, entitiesFound: 37 }

  it("IndexingProgress holds packageProgress of integer counts", () => {
    assert.isTrue(Schema.is(BuildStatus.IndexingProgress)({ packageProgress: progress }))
    assert.isTrue(Schema.is(BuildStatus.PackageIndexingProgress)(progress))
  })
  it.each([
    ["a fractional count", { ...progress, entitiesFound: 1.5 }],
    ["a negative count", { ...progress, sourcesFailed: -1 }],
    ["a missing count", { sourcesTotal: 1, sourcesProcessing: 0, sourcesCompleted: 1, sourcesFailed: 0 }],
    ["a string count", { ...progress, sourcesTotal: "4" }],
    ["a null count", { ...progress, sourcesTotal: null }]
  ])("PackageIndexingProgress rejects %s", (_, value) =>
    assert.isFalse(Schema.is(BuildStatus.PackageIndexingProgress)(value)))
  it("IndexingProgress requires packageProgress", () =>
    assert.isFalse(Schema.is(BuildStatus.IndexingProgress)({})))
})
