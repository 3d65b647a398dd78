/**
 * The specification's error vocabulary: one class per error code, and one table
 * that maps every code to its HTTP status. Adapters render any of these as the
 * spec's `{ code, message }` body; they never invent codes of their own.
 */
import { Schema } from "effect"

/** Every error code of the specification with its HTTP status: the one status table. */
export const statusByCode = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_REQUIRED: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  RESOURCE_NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  ORGANIZATION_NAME_TAKEN: 409,
  ORGANIZATION_NAME_RESERVED: 409,
  INVITE_ALREADY_CONSUMED: 409,
  INVITE_ALREADY_CONSUMED_REVOKE: 409,
  INVITE_INVALID: 400,
  INVITE_EXPIRED: 400,
  INVITE_EMAIL_MISMATCH: 403
} as const

/** A machine-readable error code. */
export type ErrorCode = keyof typeof statusByCode

/** The error codes, in the order of the specification. */
export const errorCodes = Object.keys(statusByCode) as ReadonlyArray<ErrorCode>

/** The spec's Error resource: `{ code, message }`. */
export const ErrorBody = Schema.Struct({
  code: Schema.Literals(errorCodes),
  message: Schema.String
}).annotate({ identifier: "Error" })

/** The spec's Error resource. */
export type ErrorBody = typeof ErrorBody.Type

const fields = { message: Schema.String }

/** VALIDATION_ERROR: a body, path or query parameter failed validation. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", fields) {
  readonly code = "VALIDATION_ERROR" as const
}
/** AUTHENTICATION_REQUIRED: valid authentication is required. */
export class AuthenticationRequired
  extends Schema.TaggedError<AuthenticationRequired>()("AuthenticationRequired", fields)
{
  readonly code = "AUTHENTICATION_REQUIRED" as const
}
/** INSUFFICIENT_PERMISSIONS: the caller lacks the required permission. */
export class InsufficientPermissions
  extends Schema.TaggedError<InsufficientPermissions>()("InsufficientPermissions", fields)
{
  readonly code = "INSUFFICIENT_PERMISSIONS" as const
}
/** RESOURCE_NOT_FOUND: the resource does not exist (or is not visible to the caller). */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", fields) {
  readonly code = "RESOURCE_NOT_FOUND" as const
}
/** CONFLICT: a state conflict when no more specific code applies. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {
  readonly code = "CONFLICT" as const
}
/** RATE_LIMIT_EXCEEDED: the caller exceeded a rate limit. */
export class RateLimitExceeded extends Schema.TaggedError<RateLimitExceeded>()("RateLimitExceeded", {
  ...fields,
  retryAfterSeconds: Schema.optionalKey(Schema.Number)
}) {
  readonly code = "RATE_LIMIT_EXCEEDED" as const
}
/** INTERNAL_ERROR: an unexpected server error; its message never carries internals. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {
  readonly code = "INTERNAL_ERROR" as const
}
/** ORGANIZATION_NAME_TAKEN: the organization name (URL slug) is already in use. */
export class OrganizationNameTaken extends Schema.TaggedError<OrganizationNameTaken>()("OrganizationNameTaken", fields) {
  readonly code = "ORGANIZATION_NAME_TAKEN" as const
}
/** ORGANIZATION_NAME_RESERVED: the name collides with a platform subdomain. */
export class OrganizationNameReserved
  extends Schema.TaggedError<OrganizationNameReserved>()("OrganizationNameReserved", fields)
{
  readonly code = "ORGANIZATION_NAME_RESERVED" as const
}
/** INVITE_ALREADY_CONSUMED: the invite token was already redeemed. */
export class InviteAlreadyConsumed extends Schema.TaggedError<InviteAlreadyConsumed>()("InviteAlreadyConsumed", fields) {
  readonly code = "INVITE_ALREADY_CONSUMED" as const
}
/** INVITE_ALREADY_CONSUMED_REVOKE: consumed invites are kept for audit and cannot be revoked. */
export class InviteAlreadyConsumedRevoke
  extends Schema.TaggedError<InviteAlreadyConsumedRevoke>()("InviteAlreadyConsumedRevoke", fields)
{
  readonly code = "INVITE_ALREADY_CONSUMED_REVOKE" as const
}
/** INVITE_INVALID: the invite token is malformed or unknown. */
export class InviteInvalid extends Schema.TaggedError<InviteInvalid>()("InviteInvalid", fields) {
  readonly code = "INVITE_INVALID" as const
}
/** INVITE_EXPIRED: the invite token is past its expiry time. */
export class InviteExpired extends Schema.TaggedError<InviteExpired>()("InviteExpired", fields) {
  readonly code = "INVITE_EXPIRED" as const
}
/** INVITE_EMAIL_MISMATCH: the invite is bound to a different e-mail address than the caller's. */
export class InviteEmailMismatch extends Schema.TaggedError<InviteEmailMismatch>()("InviteEmailMismatch", fields) {
  readonly code = "INVITE_EMAIL_MISMATCH" as const
}

/**
 * An event that a state machine does not allow from the current state. It is a
 * state conflict, so it renders as CONFLICT; `machine`, `from` and `event` say which.
 */
export class IllegalTransition extends Schema.TaggedError<IllegalTransition>()("IllegalTransition", {
  message: Schema.String,
  machine: Schema.String,
  from: Schema.String,
  event: Schema.String
}) {
  readonly code = "CONFLICT" as const
}

/**
 * The pre-save connection test failed: the request cannot be performed, so it is a
 * VALIDATION_ERROR (400). `message` names the step that failed and never a secret.
 */
export class ConnectionTestFailed extends Schema.TaggedError<ConnectionTestFailed>()("ConnectionTestFailed", {
  message: Schema.String,
  step: Schema.String
}) {
  readonly code = "VALIDATION_ERROR" as const
}

/** Every error class, one per code. */
export const errorClasses = [
  ValidationError,
  AuthenticationRequired,
  InsufficientPermissions,
  ResourceNotFound,
  Conflict,
  RateLimitExceeded,
  InternalError,
  OrganizationNameTaken,
  OrganizationNameReserved,
  InviteAlreadyConsumed,
  InviteAlreadyConsumedRevoke,
  InviteInvalid,
  InviteExpired,
  InviteEmailMismatch
] as const

/** Any error of the specification's vocabulary. */
export type ApiError = InstanceType<typeof errorClasses[number]> | IllegalTransition | ConnectionTestFailed

/** The HTTP status of an error, from the one status table. */
export const statusOf = (error: ApiError): number => statusByCode[error.code]

/** The `{ code, message }` body of an error. */
export const toBody = (error: ApiError): ErrorBody => ({ code: error.code, message: error.message })
