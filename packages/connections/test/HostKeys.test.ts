/**
 * Pinned host keys: every accepted line form yields its key blob, comments and
 * blank lines are skipped, and a `@revoked` line revokes rather than pins.
 */
import { assert, describe, it } from "@effect/vitest"
import { Buffer } from "node:buffer"
import * as HostKeys from "../src/internal/HostKeys.ts"

// An ssh-ed25519 public key blob: string "ssh-ed25519" then a 32-byte key.
const blob = (fill: number) => {
  const type = Buffer.from("ssh-ed25519")
  const key = Buffer.alloc(32, fill)
  const out = Buffer.alloc(4 + type.length + 4 + key.length)
  out.writeUInt32BE(type.length, 0)
  type.copy(out, 4)
  out.writeUInt32BE(key.length, 4 + type.length)
  key.copy(out, 8 + type.length)
  return out
}
const a = blob(1)
const b = blob(2)

describe("HostKeys", () => {
  it("reads plain, hashed, marked and bare lines, skipping comments", () => {
    const pins = HostKeys.pins([
      "# comment",
      `host.example,10.0.0.1 ssh-ed25519 ${a.toString("base64")} comment`,
      "",
      `|1|c2FsdA==|aGFzaA== ssh-ed25519 ${b.toString("base64")}`,
      `@cert-authority *.example ssh-ed25519 ${a.toString("base64")}`,
      b.toString("base64")
    ].join("\r\n"))
    assert.deepStrictEqual(pins.accepted.map((k) => k.toString("hex")), [a, b, a, b].map((k) => k.toString("hex")))
    assert.deepStrictEqual(pins.revoked, [])
  })

  it("matches any accepted key, never a revoked one", () => {
    const pins = HostKeys.pins([`h ssh-ed25519 ${a.toString("base64")}`, `@revoked * ssh-ed25519 ${a.toString("base64")}`, b.toString("base64")].join("\n"))
    assert.isFalse(HostKeys.matches(pins, a))
    assert.isTrue(HostKeys.matches(pins, b))
    assert.isFalse(HostKeys.matches(pins, blob(3)))
  })

  it("reads the key type inside a blob and offers only pinned host key algorithms", () => {
    assert.strictEqual(HostKeys.blobKeyType(a), "ssh-ed25519")
    assert.deepStrictEqual(HostKeys.hostKeyAlgorithms([a, b]), ["ssh-ed25519"])
    assert.strictEqual(HostKeys.hostKeyAlgorithms([Buffer.from("junk")]), undefined)
    assert.match(HostKeys.fingerprint(a), /^SHA256:[A-Za-z0-9+/]+$/)
  })
})
