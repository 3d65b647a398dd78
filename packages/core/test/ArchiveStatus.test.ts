import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { ArchiveStatus, Errors } from "@modelgate/core"

type Status = ArchiveStatus.ArchiveStatus
type Expected = Status | "illegal"

const assertOutcome = (
  result: Result.Result<Status, Errors.IllegalTransition>,
  expected: Expected,
  from: Status,
  event: string
) => {
  if (expected === "illegal") {
    assert.isTrue(Result.isFailure(result), `expected IllegalTransition from ${from} on ${event}`)
    if (Result.isFailure(result)) {
      const error = result.failure
      assert.instanceOf(error, Errors.IllegalTransition)
      assert.strictEqual(error.code, "CONFLICT")
      assert.strictEqual(error.machine, "ArchiveStatus")
      assert.strictEqual(error.from, from)
      assert.strictEqual(error.event, event)
    }
  } else {
    assert.deepStrictEqual(result, Result.succeed(expected))
  }
}

describe("ArchiveStatus schema", () => {
  it.each(["archive", "unarchive", "error_state"])("accepts %j", (value) =>
    assert.isTrue(Schema.is(ArchiveStatus.ArchiveStatus)(value)))
  it.each(["", "archived", "ARCHIVE", "error", null, 1])("rejects %j", (value) =>
    assert.isFalse(Schema.is(ArchiveStatus.ArchiveStatus)(value)))
  it("lists the three statuses in spec order", () =>
    assert.deepStrictEqual(ArchiveStatus.archiveStatuses, ["archive", "unarchive", "error_state"]))
})

describe("ArchiveStatus.transition (PATCH), every current x requested", () => {
  // Rows: current status; columns: requested status.
  const table: ReadonlyArray<readonly [Status, Status, Expected]> = [
    // The spec's two moves.
    ["unarchive", "archive", "archive"],
    ["archive", "unarchive", "unarchive"],
    // Idempotent PATCH: asking for the current status is a no-op.
    ["unarchive", "unarchive", "unarchive"],
    ["archive", "archive", "archive"],
    ["error_state", "error_state", "error_state"],
    // error_state is system-set only.
    ["unarchive", "error_state", "illegal"],
    ["archive", "error_state", "illegal"],
    // A broken version may be hidden, never made available by PATCH.
    ["error_state", "archive", "archive"],
    ["error_state", "unarchive", "illegal"]
  ]

  it("covers the full product", () => {
    const keys = new Set(table.map(([from, to]) => `${from}>${to}`))
    assert.strictEqual(keys.size, ArchiveStatus.archiveStatuses.length ** 2)
  })

  it.each(table)("%s + PATCH %s -> %s", (from, requested, expected) =>
    assertOutcome(ArchiveStatus.transition(from, requested), expected, from, requested))
})

describe("ArchiveStatus.loadFailed (system event), every current", () => {
  const table: ReadonlyArray<readonly [Status, Expected]> = [
    ["unarchive", "error_state"],
    ["error_state", "error_state"],
    ["archive", "illegal"]
  ]
  it.each(table)("%s + loadFailed -> %s", (from, expected) =>
    assertOutcome(ArchiveStatus.loadFailed(from), expected, from, ArchiveStatus.loadFailedEvent))

  it("a still-broken version that is archived then unarchived returns to error_state on reload", () => {
    const hidden = Result.getOrThrow(ArchiveStatus.transition("error_state", "archive"))
    const shown = Result.getOrThrow(ArchiveStatus.transition(hidden, "unarchive"))
    assert.deepStrictEqual(ArchiveStatus.loadFailed(shown), Result.succeed("error_state"))
  })
})

describe("ArchiveStatus.atPublish and isAvailable", () => {
  it("a package that loads starts unarchive; one that fails to load enters error_state", () => {
    assert.strictEqual(ArchiveStatus.atPublish(true), "unarchive")
    assert.strictEqual(ArchiveStatus.atPublish(false), "error_state")
  })
  it.each([["unarchive", true], ["archive", false], ["error_state", false]] as const)(
    "%s is available: %s",
    (status, available) => assert.strictEqual(ArchiveStatus.isAvailable(status), available)
  )
})
