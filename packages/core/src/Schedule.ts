/**
 * A package version's materialization cadence: the 5-field UNIX cron of
 * `materializationSchedule`, its next firing time in UTC, and the rules that tie a
 * schedule to the rest of the version (exclusive with a freshness window, legal
 * only in `version` scope). The checks are Schema filters for the resource schemas.
 */
import { Cron, DateTime, Effect, Result, Schema } from "effect"
import * as Errors from "./Errors.ts"

/** The number of fields of a UNIX cron expression: minute, hour, day of month, month, day of week. */
export const cronFieldCount = 5

/**
 * Parses a 5-field UNIX cron expression, evaluated in UTC. effect's Cron also
 * reads a 6-field form whose first field is seconds; the spec allows only UNIX
 * cron, so any other field count is rejected before Cron sees it.
 */
export const parseCron = (expression: string): Result.Result<Cron.Cron, Errors.ValidationError> => {
  const fields = expression.trim().split(/\s+/).filter((field) => field.length > 0)
  if (fields.length !== cronFieldCount) {
    return Result.fail(
      new Errors.ValidationError({
        message: `materializationSchedule must be a 5-field UNIX cron expression, got ${fields.length} field(s)`
      })
    )
  }
  return Result.mapError(
    Cron.parse(expression, "UTC"),
    (error) => new Errors.ValidationError({ message: `invalid cron expression "${expression}": ${error.message}` })
  )
}

/** `materializationSchedule`: a 5-field UNIX cron expression (names such as `jan` and `mon-fri` allowed). */
export const CronExpression = Schema.String.check(
  Schema.makeFilter((expression: string) => Result.match(parseCron(expression), {
    onSuccess: () => undefined,
    onFailure: (error) => error.message
  }), { expected: "a 5-field UNIX cron expression" })
).annotate({ identifier: "CronExpression" })

/** The next firing of a schedule strictly after `after`, in UTC. */
export const nextScheduledAt = (
  expression: string,
  after: DateTime.Utc
): Result.Result<DateTime.Utc, Errors.ValidationError> =>
  Result.map(parseCron(expression), (cron) => DateTime.fromDateUnsafe(Cron.next(cron, after)))

/** {@link nextScheduledAt} after the current time of the Clock. */
export const nextScheduledAtNow = (expression: string): Effect.Effect<DateTime.Utc, Errors.ValidationError> =>
  Effect.flatMap(DateTime.now, (now) => Effect.fromResult(nextScheduledAt(expression, now)))

/** A version's `scope`: who owns its materialized tables. */
export const MaterializationScope = Schema.Literals(["version", "package"]).annotate({
  identifier: "MaterializationScope"
})
/** A version's `scope`. */
export type MaterializationScope = typeof MaterializationScope.Type

/** The scope a version behaves with: null (older versions) is treated as package. */
export const effectiveScope = (scope: MaterializationScope | null | undefined): MaterializationScope =>
  scope ?? "package"

/** The fields the schedule-versus-window rule reads; absent counts as null. */
export interface ScheduleAndWindow {
  readonly materializationSchedule?: string | null | undefined
  readonly materializationFreshnessWindowSeconds?: number | null | undefined
}

/** The fields the schedule-versus-scope rule reads; absent counts as null. */
export interface ScheduleAndScope {
  readonly scope?: MaterializationScope | null | undefined
  readonly materializationSchedule?: string | null | undefined
}

const declared = <A>(value: A | null | undefined): value is A => value !== null && value !== undefined

const scheduleXorWindowMessage =
  "materializationSchedule and materializationFreshnessWindowSeconds are mutually exclusive on one version"

const scheduleScopeMessage = "a materializationSchedule is legal only with scope version (a null scope is package)"

/** Checks that a version does not declare both a schedule and a freshness window. */
export const checkScheduleXorWindow = (input: ScheduleAndWindow): Result.Result<void, Errors.ValidationError> =>
  // "Package version freshness window and schedule: mutually exclusive on one version."
  declared(input.materializationSchedule) && declared(input.materializationFreshnessWindowSeconds)
    ? Result.fail(new Errors.ValidationError({ message: scheduleXorWindowMessage }))
    : Result.succeed(undefined)

/** Checks that a schedule is declared only in version scope. */
export const checkScheduleScope = (input: ScheduleAndScope): Result.Result<void, Errors.ValidationError> =>
  // "A package-level materializationSchedule is legal only in this mode (version)";
  // in package scope the cadence is freshness only, and null scope means package.
  declared(input.materializationSchedule) && effectiveScope(input.scope) !== "version"
    ? Result.fail(new Errors.ValidationError({ message: scheduleScopeMessage }))
    : Result.succeed(undefined)

/** Schema filter of {@link checkScheduleXorWindow}, for `.check(...)` on a version schema. */
export const isScheduleXorWindow = Schema.makeFilter<ScheduleAndWindow>(
  (input) =>
    Result.isFailure(checkScheduleXorWindow(input))
      ? { path: ["materializationSchedule"], issue: scheduleXorWindowMessage }
      : undefined,
  { expected: "a schedule or a freshness window, not both" }
)

/** Schema filter of {@link checkScheduleScope}, for `.check(...)` on a version schema. */
export const isScheduleScopeLegal = Schema.makeFilter<ScheduleAndScope>(
  (input) =>
    Result.isFailure(checkScheduleScope(input))
      ? { path: ["materializationSchedule"], issue: scheduleScopeMessage }
      : undefined,
  { expected: "a schedule only with scope version" }
)
