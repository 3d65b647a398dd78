/**
 * The admin API's security middleware: a bearer JWT becomes the `CurrentActor`
 * that handlers receive; handlers never read headers. The verification itself is
 * the TokenVerifier service, so a host application can swap in its own identity.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Roles } from "@modelgate/core"
import { Unauthorized } from "./AdminErrors.ts"

/** The authenticated caller of the current request. */
export class CurrentActor extends Context.Service<CurrentActor, Roles.Actor>()("@modelgate/http/CurrentActor") {}

/** Bearer-token authentication; fails with 401 AUTHENTICATION_REQUIRED. */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentActor }>()(
  "@modelgate/http/Authentication",
  { security: { bearer: HttpApiSecurity.bearer }, error: Unauthorized }
) {}
