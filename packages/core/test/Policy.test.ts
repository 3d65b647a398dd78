import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Errors, Policy, Roles } from "@modelgate/core"

// The rules, restated here without reading Policy.operations: for each
// operation, the level it acts on and the roles that may perform it there.
type Level = "Organization" | "Environment" | "Package" | "Workspace" | "Document"
const expectedRules: Record<string, { readonly level: Level; readonly roles: ReadonlyArray<string> }> = {
  "connection.create": { level: "Environment", roles: ["admin"] },
  "connection.update": { level: "Environment", roles: ["admin"] },
  "connection.delete": { level: "Environment", roles: ["admin"] },
  "connection.read": { level: "Environment", roles: ["admin", "modeler", "viewer"] },
  "connection.list": { level: "Environment", roles: ["admin", "modeler", "viewer"] },
  "package.create": { level: "Environment", roles: ["admin", "modeler"] },
  "version.publish": { level: "Package", roles: ["admin", "modeler"] },
  "version.updateStatus": { level: "Package", roles: ["admin", "modeler"] },
  "version.read": { level: "Package", roles: ["admin", "modeler", "viewer"] },
  "version.list": { level: "Package", roles: ["admin", "modeler", "viewer"] },
  "permission.create": { level: "Package", roles: ["admin", "modeler"] },
  "permission.list": { level: "Package", roles: ["admin", "modeler", "viewer"] },
  "query.execute": { level: "Package", roles: ["admin", "modeler", "viewer"] },
  "context.read": { level: "Package", roles: ["admin", "modeler", "viewer"] },
  "workspace.read": { level: "Workspace", roles: ["manager", "editor", "viewer"] },
  "workspace.update": { level: "Workspace", roles: ["manager"] },
  "document.read": { level: "Document", roles: ["manager", "editor", "viewer"] },
  "document.update": { level: "Document", roles: ["manager", "editor"] }
}

// Scopes as paths: a grant at `place` reaches `target` when both are on the same
// chain and `place`'s path is a prefix of `target`'s.
interface Place {
  readonly label: string
  readonly chain: "package" | "workspace" | "both"
  readonly path: ReadonlyArray<string>
  readonly scope: Roles.Scope
}
const place = (label: string, chain: Place["chain"], path: ReadonlyArray<string>, scope: Roles.Scope): Place => ({
  label,
  chain,
  path,
  scope
})
const places: ReadonlyArray<Place> = [
  place("organization", "both", ["acme"], Roles.organizationScope("acme")),
  place("other organization", "both", ["globex"], Roles.organizationScope("globex")),
  place("environment", "package", ["acme", "prod"], Roles.environmentScope("acme", "prod")),
  place("sibling environment", "package", ["acme", "dev"], Roles.environmentScope("acme", "dev")),
  place("package", "package", ["acme", "prod", "sales"], Roles.packageScope("acme", "prod", "sales")),
  place("sibling package", "package", ["acme", "prod", "marketing"], Roles.packageScope("acme", "prod", "marketing")),
  place("same package name elsewhere", "package", ["acme", "dev", "sales"], Roles.packageScope("acme", "dev", "sales")),
  place("workspace", "workspace", ["acme", "finance"], Roles.workspaceScope("acme", "finance")),
  place("sibling workspace", "workspace", ["acme", "hr"], Roles.workspaceScope("acme", "hr")),
  place("document", "workspace", ["acme", "finance", "q1"], Roles.documentScope("acme", "finance", "q1")),
  place("sibling document", "workspace", ["acme", "finance", "q2"], Roles.documentScope("acme", "finance", "q2"))
]
const targetLabel: Record<Level, string> = {
  Organization: "organization",
  Environment: "environment",
  Package: "package",
  Workspace: "workspace",
  Document: "document"
}
const placeNamed = (label: string): Place => {
  const found = places.find((p) => p.label === label)
  if (found === undefined) throw new Error(`no place ${label}`)
  return found
}
// No operation acts on a whole organization, so the typed scope of "any operation" excludes it.
const targetOf = (level: Level): Policy.ScopeFor<Policy.Operation> => {
  const scope = placeNamed(targetLabel[level]).scope
  if (scope._tag === "Organization") throw new Error("no operation acts on an organization")
  return scope
}
const reaches = (from: Place, to: Place): boolean =>
  (from.chain === "both" || to.chain === "both" || from.chain === to.chain) &&
  from.path.length <= to.path.length &&
  from.path.every((name, i) => to.path[i] === name)

// An organization role seen from a workspace or document.
const asWorkspaceRole: Record<string, string> = { admin: "manager", modeler: "editor", viewer: "viewer" }

const expectedAllowed = (operation: string, at: Place, role: string | undefined): boolean => {
  const rule = expectedRules[operation]
  if (rule === undefined || role === undefined) return false
  const target = placeNamed(targetLabel[rule.level])
  if (!reaches(at, target)) return false
  const seen = target.chain === "workspace" && at.chain !== "workspace" ? asWorkspaceRole[role] : role
  return seen !== undefined && rule.roles.includes(seen)
}

const rolesAt = (at: Place): ReadonlyArray<string | undefined> =>
  at.chain === "workspace" ? ["manager", "editor", "viewer", undefined] : ["admin", "modeler", "viewer", undefined]

const alice: Roles.Actor = { userId: "u-alice", email: "alice@example.com", groups: ["analysts", "everyone"] }
const principals = {
  "user id": "user:u-alice",
  "user e-mail": "user:Alice@Example.com",
  group: "group:analysts"
} as const

// Grants to other principals that name alice in no way; they must never count.
const noise: ReadonlyArray<Roles.Grant> = [
  { principal: "user:u-mallory", scope: Roles.organizationScope("acme"), role: "admin" },
  { principal: "user:mallory@example.com", scope: Roles.organizationScope("acme"), role: "admin" },
  { principal: "group:admins", scope: Roles.organizationScope("acme"), role: "admin" }
]

const grantAt = (principal: string, at: Place, role: string): Roles.Grant | undefined => {
  const scope = at.scope
  if (scope._tag === "Workspace" || scope._tag === "Document") {
    return role === "manager" || role === "editor" || role === "viewer" ? { principal, scope, role } : undefined
  }
  return role === "admin" || role === "modeler" || role === "viewer" ? { principal, scope, role } : undefined
}

describe("Policy", () => {
  it("allows exactly the expected roles, at every level, directly and through a group", () => {
    assert.deepStrictEqual([...Policy.operationNames].sort(), Object.keys(expectedRules).sort())
    const mismatches: Array<string> = []
    const outcomes = new Map<string, Set<boolean>>()
    for (const operation of Policy.operationNames) {
      const rule = expectedRules[operation]
      assert.isDefined(rule)
      const target = targetOf(rule.level)
      for (const at of places) {
        for (const role of rolesAt(at)) {
          for (const [via, principal] of Object.entries(principals)) {
            const grant = role === undefined ? undefined : grantAt(principal, at, role)
            const grants = grant === undefined ? noise : [...noise, grant]
            const actual = Policy.can(grants, alice, operation, target)
            const expected = expectedAllowed(operation, at, role)
            if (actual !== expected) {
              mismatches.push(`${operation}: ${role ?? "no role"} at ${at.label} via ${via}: ${actual}, expected ${expected}`)
            }
            const decision = Policy.decide(grants, alice, operation, target)
            if (decision._tag === "Allowed" && decision.as !== "role") {
              mismatches.push(`${operation}: allowed as ${decision.as} without system or request`)
            }
            outcomes.set(operation, (outcomes.get(operation) ?? new Set()).add(expected))
          }
        }
      }
    }
    assert.deepStrictEqual(mismatches, [])
    // Every operation was both allowed and denied somewhere, so no row passes vacuously.
    for (const operation of Policy.operationNames) assert.strictEqual(outcomes.get(operation)?.size, 2, operation)
  })

  const sales = Roles.packageScope("acme", "prod", "sales")
  const viewerGrants: ReadonlyArray<Roles.Grant> = [{ principal: "user:u-alice", scope: sales, role: "viewer" }]
  const modelerGrants: ReadonlyArray<Roles.Grant> = [{ principal: "group:analysts", scope: sales, role: "modeler" }]

  it("lets any authenticated caller request a package permission", () => {
    for (const grants of [[], viewerGrants, modelerGrants]) {
      assert.deepStrictEqual(
        Policy.decide(grants, alice, "permission.create", sales, { requestPermission: true }),
        { _tag: "Allowed", as: "request" }
      )
    }
  })

  it("grants a package permission only by role when requestPermission is not true", () => {
    assert.strictEqual(Policy.decide(viewerGrants, alice, "permission.create", sales)._tag, "Denied")
    assert.strictEqual(
      Policy.decide(viewerGrants, alice, "permission.create", sales, { requestPermission: false })._tag,
      "Denied"
    )
    assert.deepStrictEqual(
      Policy.decide(modelerGrants, alice, "permission.create", sales, { requestPermission: false }),
      { _tag: "Allowed", as: "role", role: "modeler" }
    )
  })

  it("ignores requestPermission on operations that cannot be requested", () => {
    assert.strictEqual(
      Policy.decide(viewerGrants, alice, "version.publish", sales, { requestPermission: true })._tag,
      "Denied"
    )
    assert.isFalse(
      Policy.can([], alice, "connection.update", Roles.environmentScope("acme", "prod"), { requestPermission: true })
    )
  })

  it("always allows the system actor, without grants", () => {
    const system: Roles.Actor = { userId: "system", groups: [], system: true }
    for (const operation of Policy.operationNames) {
      const rule = expectedRules[operation]
      assert.isDefined(rule)
      const decision = Policy.decide([], system, operation, targetOf(rule.level))
      assert.deepStrictEqual(decision, { _tag: "Allowed", as: "system" }, operation)
    }
    // `system` must be exactly true; an ordinary actor without grants is denied.
    assert.isFalse(Policy.can([], { userId: "system", groups: [] }, "version.publish", sales))
  })

  it("denies a scope of the wrong level, even to an organization admin", () => {
    const grants: ReadonlyArray<Roles.Grant> = [
      { principal: "user:u-alice", scope: Roles.organizationScope("acme"), role: "admin" }
    ]
    // Typed as any operation, the call compiles; the level is then checked at run time.
    const decision = Policy.decide<Policy.Operation>(grants, alice, "version.publish", Roles.environmentScope("acme", "prod"))
    assert.deepStrictEqual(decision, {
      _tag: "Denied",
      reason: "version.publish applies at the package level, not the environment level"
    })
  })

  it("names the required role and level when it denies", () => {
    assert.deepStrictEqual(Policy.decide(viewerGrants, alice, "version.updateStatus", sales), {
      _tag: "Denied",
      reason: "version.updateStatus requires package admin or modeler permission"
    })
    assert.deepStrictEqual(Policy.decide([], alice, "connection.update", Roles.environmentScope("acme", "prod")), {
      _tag: "Denied",
      reason: "connection.update requires environment admin permission"
    })
  })

  it.effect("require fails with INSUFFICIENT_PERMISSIONS", () =>
    Effect.gen(function*() {
      const error = yield* Policy.require(viewerGrants, alice, "version.publish", sales).pipe(Effect.flip)
      assert.instanceOf(error, Errors.InsufficientPermissions)
      assert.strictEqual(error.code, "INSUFFICIENT_PERMISSIONS")
      assert.strictEqual(error.message, "version.publish requires package admin or modeler permission")
    }))

  it.effect("require succeeds with the decision, so a request is not mistaken for a grant", () =>
    Effect.gen(function*() {
      const granted = yield* Policy.require(modelerGrants, alice, "version.publish", sales)
      assert.deepStrictEqual(granted, { _tag: "Allowed", as: "role", role: "modeler" })
      const requested = yield* Policy.require(viewerGrants, alice, "permission.create", sales, {
        requestPermission: true
      })
      assert.strictEqual(requested.as, "request")
    }))
})
