/**
 * Small conversions shared by the SQL repositories: timestamps between
 * DateTime and timestamptz, JSON columns, and the mapping of SQL failures onto
 * the domain's errors (a unique violation is a CONFLICT; anything else is a
 * defect, which the API renders as INTERNAL_ERROR).
 */
import { DateTime, Effect, Predicate } from "effect"
import { Errors } from "@modelgate/core"
import type { SqlError } from "effect/sql/SqlError"

/** A timestamptz value as read by the driver (Date or ISO text) as a DateTime. */
export const time = (value: unknown): DateTime.Utc => {
  if (value instanceof Date) return DateTime.makeUnsafe(value)
  if (Predicate.isString(value)) return DateTime.makeUnsafe(value)
  throw new Error(`Not a timestamp: ${String(value)}`)
}

/** A nullable timestamptz as a DateTime or null. */
export const timeOrNull = (value: unknown): DateTime.Utc | null => (value === null || value === undefined ? null : time(value))

/** A DateTime as ISO text for a timestamptz parameter. */
export const iso = (value: DateTime.Utc): string => DateTime.formatIso(value)

/** A nullable DateTime as ISO text or null. */
export const isoOrNull = (value: DateTime.Utc | null): string | null => (value === null ? null : iso(value))

/** A jsonb value as read by the driver (parsed, or text) as a JS value. */
export const json = (value: unknown): unknown => (Predicate.isString(value) ? JSON.parse(value) : value)

/**
 * Maps a unique violation to CONFLICT with `message` (given the violated constraint's
 * name when it depends on it); every other SQL failure becomes a defect.
 */
export const conflictOnUnique = (message: string | ((constraint: string) => string)) =>
<A, R>(self: Effect.Effect<A, SqlError, R>): Effect.Effect<A, Errors.Conflict, R> =>
  Effect.catch(self, (error) =>
    error.cause._tag === "UniqueViolation"
      ? Effect.fail(new Errors.Conflict({ message: Predicate.isString(message) ? message : message(error.cause.constraint) }))
      : Effect.die(error))
