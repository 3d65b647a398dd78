import { assert, describe, it } from "@effect/vitest"
import { McpSession } from "@modelgate/mcp"

const key = McpSession.keyFrom("a configured secret")
const session = { principal: "alice", path: "/mcp", protocolVersion: "2025-11-25", expiresAt: 2_000 }

describe("McpSession", () => {
  it("a session id verifies for its principal, path and lifetime, on any instance with the same secret", () => {
    const id = McpSession.issue(key, session)
    assert.match(id, /^[\x21-\x7e]+$/)
    const checked = McpSession.verify(McpSession.keyFrom("a configured secret"), id, { principal: "alice", path: "/mcp", now: 1_000 })
    assert.deepStrictEqual(checked, { ok: true, session })
  })

  it("two sessions of the same principal get different ids", () => {
    assert.notStrictEqual(McpSession.issue(key, session), McpSession.issue(key, session))
  })

  it("refuses other principals, other paths, expired, forged and malformed ids", () => {
    const id = McpSession.issue(key, session)
    const reason = (presented: string, principal = "alice", path = "/mcp", now = 1_000) => {
      const checked = McpSession.verify(key, presented, { principal, path, now })
      return checked.ok ? "ok" : checked.reason
    }
    assert.strictEqual(reason(id, "bob"), "other_principal")
    assert.strictEqual(reason(id, "alice", "/mcp/workspace/retail"), "other_path")
    assert.strictEqual(reason(id, "alice", "/mcp", 2_000), "expired")
    assert.strictEqual(McpSession.verify(McpSession.randomKey(), id, { principal: "alice", path: "/mcp", now: 1_000 }).ok, false)
    const [payload = "", mac = ""] = id.split(".")
    const otherPayload = Buffer.from(JSON.stringify({ p: "bob", u: "/mcp", v: "2025-11-25", e: 2_000, n: "x" })).toString("base64url")
    assert.strictEqual(reason(`${otherPayload}.${mac}`, "bob"), "forged")
    assert.strictEqual(reason(payload), "malformed")
    assert.strictEqual(reason(`${id}.extra`), "malformed")
    assert.strictEqual(reason(""), "malformed")
  })
})
