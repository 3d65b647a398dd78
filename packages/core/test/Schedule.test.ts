import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Errors, Schedule } from "@modelgate/core"

const at = (iso: string) => DateTime.makeUnsafe(iso)

describe("CronExpression", () => {
  const accepts = Schema.is(Schedule.CronExpression)

  it.each([
    ["every hour", "0 * * * *"],
    ["every minute", "* * * * *"],
    ["lowest values", "0 0 1 1 0"],
    ["highest values", "59 23 31 12 6"],
    ["Sunday as 7", "0 0 * * 7"],
    ["lists", "1,2,3 * * * *"],
    ["ranges", "0 9-17 * * 1-5"],
    ["steps on *", "*/15 * * * *"],
    ["steps on a range", "1-5/2 * * * *"],
    ["steps from a start", "5/15 * * * *"],
    ["month names", "0 0 1 jan *"],
    ["month name range, upper case", "0 0 * JAN-MAR *"],
    ["weekday names", "*/15 9-17 * * mon-fri"],
    ["weekday name, upper case", "0 0 * * SUN"],
    ["day of month and weekday together", "0 0 1,15 * 1"],
    ["runs of spaces", "0  *  * * *"],
    ["tabs", "0\t* * * *"],
    ["surrounding whitespace", " 0 * * * * "]
  ])("accepts %s: %j", (_, expression) => assert.isTrue(accepts(expression)))

  it.each([
    ["empty", ""],
    ["blank", "   "],
    ["4 fields", "* * * *"],
    ["6 fields (seconds first, accepted by Cron.parse)", "0 0 1 * * *"],
    ["6 fields of *", "* * * * * *"],
    ["7 fields", "0 0 0 1 * * *"],
    ["a macro", "@daily"],
    ["minute 60", "60 * * * *"],
    ["hour 24", "* 24 * * *"],
    ["day of month 0", "* * 0 * *"],
    ["day of month 32", "* * 32 * *"],
    ["month 0", "* * * 0 *"],
    ["month 13", "* * * 13 *"],
    ["weekday 8", "* * * * 8"],
    ["a reversed range", "5-1 * * * *"],
    ["a zero step", "*/0 * * * *"],
    ["a word", "a * * * *"],
    ["an unknown name", "0 0 * foo *"],
    ["a fraction", "1.5 * * * *"],
    ["a negative value", "-1 * * * *"],
    ["Quartz ?", "0 0 ? * *"],
    ["Quartz L", "0 0 L * *"]
  ])("rejects %s: %j", (_, expression) => assert.isFalse(accepts(expression)))

  it("rejects non-strings", () => {
    assert.isFalse(accepts(null))
    assert.isFalse(accepts(5))
  })

  it("explains why a 6-field expression is refused", () => {
    const result = Schedule.parseCron("0 0 1 * * *")
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.instanceOf(result.failure, Errors.ValidationError)
      assert.include(result.failure.message, "5-field")
      assert.include(result.failure.message, "6 field")
    }
  })

  it("reports a range error from the cron parser", () => {
    const decoded = Schema.decodeUnknownResult(Schedule.CronExpression)("61 * * * *")
    assert.isTrue(Result.isFailure(decoded))
    if (Result.isFailure(decoded)) assert.include(decoded.failure.message, "between 0 and 59")
  })
})

describe("Schedule.nextScheduledAt (UTC)", () => {
  it.each([
    ["is strictly after the given instant", "0 * * * *", "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z"],
    ["rounds up to the next matching minute", "0 * * * *", "2024-01-01T00:00:30Z", "2024-01-01T01:00:00Z"],
    ["every minute", "* * * * *", "2024-01-01T10:20:59Z", "2024-01-01T10:21:00Z"],
    ["skips a weekend", "*/15 9-17 * * mon-fri", "2024-01-05T17:50:00Z", "2024-01-08T09:00:00Z"],
    ["crosses into next year", "0 0 1 jan *", "2024-06-01T00:00:00Z", "2025-01-01T00:00:00Z"],
    ["finds the next leap day", "0 0 29 2 *", "2023-03-01T00:00:00Z", "2024-02-29T00:00:00Z"],
    ["day of month OR weekday when both are restricted", "0 0 1,15 * 1", "2024-01-02T00:00:00Z", "2024-01-08T00:00:00Z"],
    ["steps on hours", "0 */6 * * *", "2024-01-01T07:00:00Z", "2024-01-01T12:00:00Z"],
    ["Sunday as 7", "0 12 * * 7", "2024-01-01T00:00:00Z", "2024-01-07T12:00:00Z"],
    // A DST change day in Europe and the US: UTC has no gap, so 02:30 exists.
    ["ignores daylight saving time", "30 2 * * *", "2024-03-31T00:00:00Z", "2024-03-31T02:30:00Z"]
  ])("%s: %j after %s -> %s", (_, expression, after, expected) =>
    assert.deepStrictEqual(Schedule.nextScheduledAt(expression, at(after)), Result.succeed(at(expected))))

  it("fails with ValidationError on an invalid expression", () => {
    const result = Schedule.nextScheduledAt("0 0 1 * * *", at("2024-01-01T00:00:00Z"))
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.instanceOf(result.failure, Errors.ValidationError)
  })

  it.effect("nextScheduledAtNow reads the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(at("2024-05-10T08:59:59Z")))
      assert.deepStrictEqual(yield* Schedule.nextScheduledAtNow("0 9 * * *"), at("2024-05-10T09:00:00Z"))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Schedule.nextScheduledAtNow("0 9 * * *"), at("2024-05-11T09:00:00Z"))
      const error = yield* Schedule.nextScheduledAtNow("every day").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ValidationError")
    }))
})

describe("Schedule and freshness window are mutually exclusive on one version", () => {
  it.each([
    ["neither", {}, true],
    ["both null", { materializationSchedule: null, materializationFreshnessWindowSeconds: null }, true],
    ["a schedule only", { materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: null }, true],
    ["a window only", { materializationSchedule: null, materializationFreshnessWindowSeconds: 3600 }, true],
    ["both", { materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: 3600 }, false],
    ["both, with a window of 0", { materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: 0 }, false]
  ] as const)("%s -> legal: %s", (_, input, legal) =>
    assert.strictEqual(Result.isSuccess(Schedule.checkScheduleXorWindow(input)), legal))

  const Version = Schema.Struct({
    materializationSchedule: Schema.NullOr(Schedule.CronExpression),
    materializationFreshnessWindowSeconds: Schema.NullOr(Schema.Int)
  }).check(Schedule.isScheduleXorWindow)

  it("works as a Schema check on a version schema", () => {
    const decode = Schema.decodeUnknownResult(Version)
    assert.isTrue(Result.isSuccess(decode({ materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: null })))
    const both = decode({ materializationSchedule: "0 * * * *", materializationFreshnessWindowSeconds: 60 })
    assert.isTrue(Result.isFailure(both))
    if (Result.isFailure(both)) {
      assert.include(both.failure.message, "mutually exclusive")
      assert.include(both.failure.message, "materializationSchedule")
    }
  })
})

describe("A schedule is legal only with scope version", () => {
  it.each([
    ["version scope with a schedule", { scope: "version", materializationSchedule: "0 * * * *" }, true],
    ["package scope with a schedule", { scope: "package", materializationSchedule: "0 * * * *" }, false],
    ["null scope (treated as package) with a schedule", { scope: null, materializationSchedule: "0 * * * *" }, false],
    ["absent scope with a schedule", { materializationSchedule: "0 * * * *" }, false],
    ["package scope without a schedule", { scope: "package", materializationSchedule: null }, true],
    ["null scope without a schedule", { scope: null }, true],
    ["version scope without a schedule", { scope: "version" }, true]
  ] as const)("%s -> legal: %s", (_, input, legal) =>
    assert.strictEqual(Result.isSuccess(Schedule.checkScheduleScope(input)), legal))

  it("null scope is treated as package", () => {
    assert.strictEqual(Schedule.effectiveScope(null), "package")
    assert.strictEqual(Schedule.effectiveScope(undefined), "package")
    assert.strictEqual(Schedule.effectiveScope("version"), "version")
    assert.strictEqual(Schedule.effectiveScope("package"), "package")
  })

  it("works as a Schema check on a version schema", () => {
    const Version = Schema.Struct({
      scope: Schema.NullOr(Schedule.MaterializationScope),
      materializationSchedule: Schema.NullOr(Schedule.CronExpression)
    }).check(Schedule.isScheduleScopeLegal)
    const decode = Schema.decodeUnknownResult(Version)
    assert.isTrue(Result.isSuccess(decode({ scope: "version", materializationSchedule: "0 * * * *" })))
    assert.isTrue(Result.isFailure(decode({ scope: null, materializationSchedule: "0 * * * *" })))
  })

  it("MaterializationScope is version or package", () => {
    assert.isTrue(Schema.is(Schedule.MaterializationScope)("version"))
    assert.isTrue(Schema.is(Schedule.MaterializationScope)("package"))
    assert.isFalse(Schema.is(Schedule.MaterializationScope)("workspace"))
  })
})
