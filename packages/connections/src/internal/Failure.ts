/**
 * How a connection test failure is written: one step name and one sentence, in
 * the same shape as the in-memory tester of core, so callers see one wording.
 * Node's socket errors are translated into words here, never echoed with secrets.
 */
import { Predicate } from "effect"
import { Errors } from "@modelgate/core"

/** The steps a connection test reports. */
export type Step = "settings" | "proxy" | "connect" | "authenticate" | "database" | "query" | "remote" | "driver"

/** A failed connection test at `step`; `message` must never carry a secret. */
export const failed = (step: Step, message: string): Errors.ConnectionTestFailed =>
  new Errors.ConnectionTestFailed({ step, message: `Connection test failed at ${step}: ${message}` })

/** A host and port, as written in messages (IPv6 literals bracketed). */
export const hostPort = (host: string, port: number): string => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`)

const wordsByCode: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "timed out",
  EPIPE: "connection closed",
  ECONNABORTED: "connection aborted"
}

/** The `code` property of a thrown value, when it has a string one. */
export const errorCode = (cause: unknown): string | undefined =>
  Predicate.hasProperty(cause, "code") && Predicate.isString(cause.code) ? cause.code : undefined

/** The `message` property of a thrown value, when it has a string one. */
export const errorMessage = (cause: unknown): string | undefined =>
  Predicate.hasProperty(cause, "message") && Predicate.isString(cause.message) ? cause.message : undefined

/** Node's socket error in words ("connection refused"), falling back to its code or a generic phrase. */
export const describeSocketError = (cause: unknown): string => {
  const code = errorCode(cause)
  if (code !== undefined) return wordsByCode[code] ?? code
  return "connection failed"
}

/** The same failure with `label` in front of its sentence ("attached database "x": ..."). */
export const within = (label: string) => (error: Errors.ConnectionTestFailed): Errors.ConnectionTestFailed =>
  new Errors.ConnectionTestFailed({
    step: error.step,
    message: error.message.replace(/^(Connection test failed at [^:]+: )?/, (prefix) => `${prefix}${label}: `)
  })

/**
 * The end of a test that could only prove reachability: this server has no client
 * for the rest, and a reachable port is not a passed connection test.
 */
export const unverifiable = (target: string, what: string, why: string): Errors.ConnectionTestFailed =>
  failed("driver", `reached ${target}, but this server cannot verify ${what} (${why}), so the connection test cannot pass`)
