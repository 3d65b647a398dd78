/**
 * API keys of the MCP server: a key is `mg_` and 32 random bytes in base64url,
 * shown once; only its SHA-256 is stored, so a leaked table reveals no key.
 * Keys are high-entropy, so a plain hash (no salt, no stretching) is enough.
 */
import { sha256Hex } from "./internal/sha256.ts"

/** The prefix of every key. */
export const prefix = "mg_"

/** A new random key. */
export const generate = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return prefix + btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

/** The stored form of a key. */
export const hash = (key: string): string => `sha256:${sha256Hex(key)}`
