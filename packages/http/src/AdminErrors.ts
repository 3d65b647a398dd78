/**
 * The admin API's error responses: the spec's `{ code, message }` body, one
 * schema per HTTP status, and the mapping from core's error vocabulary (whose
 * status table lives in core) onto them. Nothing else reaches the wire.
 */
import { Schema } from "effect"
import { Errors } from "@modelgate/core"

const codesWith = (status: number) =>
  Errors.errorCodes.filter((code) => Errors.statusByCode[code] === status) as unknown as readonly [Errors.ErrorCode, ...Array<Errors.ErrorCode>]

const body = (status: number) => ({ code: Schema.Literals(codesWith(status)), message: Schema.String })

/** 400: VALIDATION_ERROR (and the invite codes). */
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(body(400), { httpApiStatus: 400, identifier: "BadRequestError" }) {}
/** 401: AUTHENTICATION_REQUIRED. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(body(401), { httpApiStatus: 401, identifier: "UnauthorizedError" }) {}
/** 403: INSUFFICIENT_PERMISSIONS (and INVITE_EMAIL_MISMATCH). */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(body(403), { httpApiStatus: 403, identifier: "ForbiddenError" }) {}
/** 404: RESOURCE_NOT_FOUND. */
export class NotFound extends Schema.Error<NotFound>("NotFound")(body(404), { httpApiStatus: 404, identifier: "NotFoundError" }) {}
/** 409: CONFLICT (and the organization and invite conflicts). */
export class ConflictError extends Schema.Error<ConflictError>("Conflict")(body(409), { httpApiStatus: 409, identifier: "ConflictError" }) {}
/** 429: RATE_LIMIT_EXCEEDED. */
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(body(429), { httpApiStatus: 429, identifier: "RateLimitError" }) {}
/** 500: INTERNAL_ERROR, with the correlation id that the log line carries. */
export class Internal extends Schema.Error<Internal>("Internal")(body(500), { httpApiStatus: 500, identifier: "InternalError" }) {}

/** Every error response of the admin API. */
export const all = [BadRequest, Unauthorized, Forbidden, NotFound, ConflictError, TooManyRequests, Internal] as const

/** Any error response. */
export type HttpError = InstanceType<typeof all[number]>

/** The error response of a core error, by its code's status. */
export const fromDomain = (error: Errors.ApiError): HttpError => {
  const args = { code: error.code, message: error.message }
  switch (Errors.statusOf(error)) {
    case 400:
      return new BadRequest(args as ConstructorParameters<typeof BadRequest>[0])
    case 401:
      return new Unauthorized(args as ConstructorParameters<typeof Unauthorized>[0])
    case 403:
      return new Forbidden(args as ConstructorParameters<typeof Forbidden>[0])
    case 404:
      return new NotFound(args as ConstructorParameters<typeof NotFound>[0])
    case 409:
      return new ConflictError(args as ConstructorParameters<typeof ConflictError>[0])
    case 429:
      return new TooManyRequests(args as ConstructorParameters<typeof TooManyRequests>[0])
    default:
      return new Internal({ code: "INTERNAL_ERROR", message: error.message })
  }
}

/** A VALIDATION_ERROR response. */
export const validation = (message: string) => new BadRequest({ code: "VALIDATION_ERROR", message })
