/**
 * MCP session ids that any instance can check without shared state. On `initialize` the server
 * issues `Mcp-Session-Id`: a payload (principal, URL path, negotiated protocol revision, expiry,
 * nonce) and its HMAC-SHA256 under the session key. A later request that carries the header is
 * served only when the signature holds, the session has not expired, and it was issued to the
 * same principal on the same URL; otherwise the answer is 404, on which the protocol tells the
 * client to initialize again.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** What a session id carries. */
export interface Session {
  /** The principal the session was issued to. */
  readonly principal: string
  /** The MCP URL path (`/mcp` or `/mcp/workspace/{name}`). */
  readonly path: string
  /** The protocol revision negotiated at initialize. */
  readonly protocolVersion: string
  /** Expiry, epoch milliseconds. */
  readonly expiresAt: number
}

/** Why a session id was not accepted. */
export type Rejection = "malformed" | "forged" | "expired" | "other_principal" | "other_path"

const encode = (value: string) => Buffer.from(value, "utf8").toString("base64url")

const sign = (key: Uint8Array, payload: string) => createHmac("sha256", key).update(payload).digest()

/** A session id for a session: `<base64url payload>.<base64url mac>`, visible ASCII only. */
export const issue = (key: Uint8Array, session: Session): string => {
  const payload = encode(JSON.stringify({
    p: session.principal,
    u: session.path,
    v: session.protocolVersion,
    e: session.expiresAt,
    n: randomBytes(12).toString("base64url")
  }))
  return `${payload}.${sign(key, payload).toString("base64url")}`
}

/** Checks a presented session id for a request by `principal` on `path` at `now`. */
export const verify = (
  key: Uint8Array,
  id: string,
  expected: { readonly principal: string; readonly path: string; readonly now: number }
): { readonly ok: true; readonly session: Session } | { readonly ok: false; readonly reason: Rejection } => {
  const [payload = "", mac = "", ...rest] = id.split(".")
  if (payload === "" || mac === "" || rest.length > 0) return { ok: false, reason: "malformed" }
  const presented = Buffer.from(mac, "base64url")
  const computed = sign(key, payload)
  if (presented.length !== computed.length || !timingSafeEqual(presented, computed)) return { ok: false, reason: "forged" }
  let fields: unknown
  try {
    fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return { ok: false, reason: "malformed" }
  }
  if (typeof fields !== "object" || fields === null) return { ok: false, reason: "malformed" }
  const { p, u, v, e } = fields as Record<string, unknown>
  if (typeof p !== "string" || typeof u !== "string" || typeof v !== "string" || typeof e !== "number") {
    return { ok: false, reason: "malformed" }
  }
  if (e <= expected.now) return { ok: false, reason: "expired" }
  if (p !== expected.principal) return { ok: false, reason: "other_principal" }
  if (u !== expected.path) return { ok: false, reason: "other_path" }
  return { ok: true, session: { principal: p, path: u, protocolVersion: v, expiresAt: e } }
}

/** A random session key, for a single instance (sessions then end when the process does). */
export const randomKey = (): Uint8Array => randomBytes(32)

/** A session key derived from a configured secret, so that every instance accepts every session. */
export const keyFrom = (secret: string | Uint8Array): Uint8Array =>
  createHmac("sha256", secret).update("modelgate mcp session key").digest()
