/**
 * The host application's own sign-in: a user it knows signs in at `/login` and gets a session
 * token, sent back as the `host_session` cookie (browsers) or the `x-host-session` header (scripts).
 * modelgate never sees a password or a JWT: the host names the caller of each request.
 */
import { randomBytes } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"

/** A user of the host application. */
export interface User {
  readonly id: string
  readonly email: string
}

/** The cookie that carries the session. */
export const cookieName = "host_session"

/** The sessions of one running host: token → user, in memory. */
export class Sessions {
  readonly #byToken = new Map<string, User>()

  /** Opens a session for `user`; the token is the session's only secret. */
  open(user: User): string {
    const token = randomBytes(24).toString("base64url")
    this.#byToken.set(token, user)
    return token
  }

  /** The user of a session token, if it is open. */
  lookup(token: string | undefined): User | undefined {
    return token === undefined || token === "" ? undefined : this.#byToken.get(token)
  }

  /** The user of a request: its `x-host-session` header, else its `host_session` cookie. */
  fromHeaders(headers: IncomingHttpHeaders | Readonly<Record<string, string | undefined>>): User | undefined {
    const header = headers["x-host-session"]
    if (typeof header === "string") return this.lookup(header)
    const cookies = typeof headers["cookie"] === "string" ? headers["cookie"] : ""
    for (const part of cookies.split(";")) {
      const [name, ...value] = part.trim().split("=")
      if (name === cookieName) return this.lookup(value.join("="))
    }
    return undefined
  }
}
