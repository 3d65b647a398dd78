/**
 * What a failed command tells its operator: one message, rendered by `effect/cli`
 * on stderr, then exit code 1. Every failure of a command (a domain error of core,
 * a configuration error, a storage error, a defect) becomes one through `report`,
 * so no stack trace or secret-bearing cause reaches the terminal.
 */
import { Cause, Effect, Predicate, Schema } from "effect"
import { CliError } from "effect/cli"

/** A command failure with the message the operator sees. */
export class OperatorError extends Schema.TaggedError<OperatorError>()("OperatorError", {
  message: Schema.String
}) {
  /** `effect/cli` renders this instead of a stack trace. */
  override get [CliError.userMessage](): string {
    return this.message
  }
}

const messageOf = (u: unknown): string | undefined =>
  Predicate.hasProperty(u, "message") && typeof u.message === "string" && u.message.trim() !== "" ? u.message : undefined

/** The operator's message of any failure. */
export const describe = (error: unknown): string => {
  if (Predicate.isTagged(error, "ConfigError") && Predicate.hasProperty(error, "cause")) {
    // A Config failure names the variable ("… at ["MODELGATE_DB_POOL_SIZE"]").
    return `Invalid configuration: ${(messageOf(error.cause) ?? "unreadable value").replace(/\s*\n\s*/g, " ")}`
  }
  if (Predicate.isTagged(error, "SqlError") && Predicate.hasProperty(error, "reason")) {
    // A driver error's own cause says why (connection refused, authentication failed).
    const reason = error.reason
    const detail = Predicate.hasProperty(reason, "cause") ? messageOf(reason.cause) : undefined
    const own = messageOf(error) ?? "Database error"
    return detail === undefined || own.includes(detail) ? own : `${own}: ${detail}`
  }
  return messageOf(error) ?? String(error)
}

/** Turns every failure and defect of a command into an `OperatorError`; interruption stays interruption. */
export const report = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, OperatorError, R> =>
  Effect.catchCause(self, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
    const error = Cause.squash(cause)
    return Effect.fail(error instanceof OperatorError ? error : new OperatorError({ message: describe(error) }))
  })
