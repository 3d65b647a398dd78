import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Roles } from "@modelgate/core"

const org = Roles.organizationScope("acme")
const prod = Roles.environmentScope("acme", "prod")
const dev = Roles.environmentScope("acme", "dev")
const sales = Roles.packageScope("acme", "prod", "sales")
const marketing = Roles.packageScope("acme", "prod", "marketing")
const devSales = Roles.packageScope("acme", "dev", "sales")
const otherOrgSales = Roles.packageScope("globex", "prod", "sales")
const ws = Roles.workspaceScope("acme", "finance")
const otherWs = Roles.workspaceScope("acme", "hr")
const doc = Roles.documentScope("acme", "finance", "q1")
const otherDoc = Roles.documentScope("acme", "finance", "q2")

const alice: Roles.Actor = { userId: "u-alice", email: "Alice@Example.com", groups: ["analysts"] }
const bob: Roles.Actor = { userId: "u-bob", groups: [] }

describe("role lattices", () => {
  it("orders package roles viewer < modeler < admin", () => {
    assert.isTrue(Roles.atLeast<Roles.Role>("admin", "modeler"))
    assert.isTrue(Roles.atLeast<Roles.Role>("modeler", "modeler"))
    assert.isFalse(Roles.atLeast<Roles.Role>("viewer", "modeler"))
    assert.isFalse(Roles.atLeast<Roles.Role>(undefined, "viewer"))
    assert.isTrue(Roles.rank("viewer") < Roles.rank("modeler"))
    assert.isTrue(Roles.rank("modeler") < Roles.rank("admin"))
  })

  it("orders workspace roles viewer < editor < manager", () => {
    assert.isTrue(Roles.atLeast<Roles.WorkspaceRole>("manager", "editor"))
    assert.isFalse(Roles.atLeast<Roles.WorkspaceRole>("viewer", "editor"))
    assert.isTrue(Roles.rank("editor") < Roles.rank("manager"))
  })

  it("takes the strongest role", () => {
    assert.strictEqual(Roles.max<Roles.Role>("viewer", "admin"), "admin")
    assert.strictEqual(Roles.max<Roles.Role>("modeler", undefined), "modeler")
    assert.strictEqual(Roles.max<Roles.Role>(undefined, undefined), undefined)
    assert.strictEqual(Roles.strongest<Roles.Role>(["viewer", undefined, "modeler", "viewer"]), "modeler")
    assert.strictEqual(Roles.strongest<Roles.WorkspaceRole>([]), undefined)
  })

  it("lists the roles that include a minimum, strongest first", () => {
    assert.deepStrictEqual(Roles.rolesAtLeast("modeler"), ["admin", "modeler"])
    assert.deepStrictEqual(Roles.rolesAtLeast("viewer"), ["admin", "modeler", "viewer"])
    assert.deepStrictEqual(Roles.rolesAtLeast("editor"), ["manager", "editor"])
  })

  it("maps organization roles onto workspaces", () => {
    assert.strictEqual(Roles.toWorkspaceRole("admin"), "manager")
    assert.strictEqual(Roles.toWorkspaceRole("modeler"), "editor")
    assert.strictEqual(Roles.toWorkspaceRole("viewer"), "viewer")
  })

  it("decodes only the roles of each lattice", () => {
    assert.isTrue(Schema.is(Roles.Role)("modeler"))
    assert.isFalse(Schema.is(Roles.Role)("manager"))
    assert.isTrue(Schema.is(Roles.WorkspaceRole)("editor"))
    assert.isFalse(Schema.is(Roles.WorkspaceRole)("admin"))
  })
})

describe("scopes", () => {
  it("lists a scope and its ancestors, the scope first", () => {
    assert.deepStrictEqual(Roles.ancestors(org), [org])
    assert.deepStrictEqual(Roles.ancestors(prod), [prod, org])
    assert.deepStrictEqual(Roles.ancestors(sales), [sales, prod, org])
    assert.deepStrictEqual(Roles.ancestors(ws), [ws, org])
    assert.deepStrictEqual(Roles.ancestors(doc), [doc, ws, org])
  })

  it("contains exactly the scope and its descendants", () => {
    assert.isTrue(Roles.contains(org, sales))
    assert.isTrue(Roles.contains(prod, sales))
    assert.isTrue(Roles.contains(sales, sales))
    assert.isTrue(Roles.contains(org, doc))
    assert.isFalse(Roles.contains(dev, sales))
    assert.isFalse(Roles.contains(sales, prod))
    assert.isFalse(Roles.contains(marketing, sales))
    assert.isFalse(Roles.contains(devSales, sales))
    assert.isFalse(Roles.contains(otherOrgSales, sales))
    assert.isFalse(Roles.contains(ws, sales))
    assert.isFalse(Roles.contains(otherWs, doc))
  })

  it("keys scopes without collisions between names", () => {
    assert.notStrictEqual(
      Roles.key(Roles.environmentScope("a,b", "c")),
      Roles.key(Roles.environmentScope("a", "b,c"))
    )
    assert.isTrue(Roles.equals(sales, Roles.packageScope("acme", "prod", "sales")))
    assert.isFalse(Roles.equals(Roles.workspaceScope("acme", "x"), Roles.environmentScope("acme", "x")))
  })
})

describe("Grant", () => {
  it.effect("decodes a grant whose role fits its scope", () =>
    Effect.gen(function*() {
      const grant = yield* Schema.decodeUnknownEffect(Roles.Grant)({
        principal: "group:analysts",
        scope: { _tag: "Package", organization: "acme", environment: "prod", package: "sales" },
        role: "modeler"
      })
      assert.deepStrictEqual(grant.scope, sales)
    }))

  it("rejects a role of the other lattice and a malformed principal", () => {
    const is = Schema.is(Roles.Grant)
    assert.isTrue(is({ principal: "user:u1", scope: doc, role: "editor" }))
    assert.isTrue(is({ principal: "user:a@b.co", scope: org, role: "admin" }))
    assert.isFalse(is({ principal: "user:u1", scope: org, role: "manager" }))
    assert.isFalse(is({ principal: "user:u1", scope: ws, role: "admin" }))
    assert.isFalse(is({ principal: "team:x", scope: org, role: "admin" }))
  })
})

describe("namesActor", () => {
  it("names a user by id", () => {
    assert.isTrue(Roles.namesActor("user:u-alice", alice))
    assert.isFalse(Roles.namesActor("user:u-bob", alice))
  })

  it("names a user by e-mail in any case", () => {
    assert.isTrue(Roles.namesActor("user:alice@example.com", alice))
    assert.isTrue(Roles.namesActor("user:ALICE@EXAMPLE.COM", alice))
    assert.isFalse(Roles.namesActor("user:alice@example.org", alice))
    // Without a known address, an e-mail grant names nobody.
    assert.isFalse(Roles.namesActor("user:bob@example.com", bob))
  })

  it("names a user through its groups", () => {
    assert.isTrue(Roles.namesActor("group:analysts", alice))
    assert.isFalse(Roles.namesActor("group:analysts", bob))
    assert.isFalse(Roles.namesActor("group:Analysts", alice))
  })

  it("never matches a malformed principal", () => {
    assert.isFalse(Roles.namesActor("u-alice", alice))
    assert.isFalse(Roles.namesActor("user:", alice))
    assert.isFalse(Roles.namesActor("group:", { userId: "x", groups: [""] }))
  })
})

describe("effectiveRole", () => {
  it("is undefined without grants", () => {
    assert.strictEqual(Roles.effectiveRole([], alice, sales), undefined)
  })

  it("takes a direct grant at the scope", () => {
    const grants: ReadonlyArray<Roles.Grant> = [{ principal: "user:u-alice", scope: sales, role: "modeler" }]
    assert.strictEqual(Roles.effectiveRole(grants, alice, sales), "modeler")
    assert.strictEqual(Roles.effectiveRole(grants, bob, sales), undefined)
  })

  it("inherits from the environment and the organization", () => {
    assert.strictEqual(
      Roles.effectiveRole([{ principal: "user:u-alice", scope: prod, role: "admin" }], alice, sales),
      "admin"
    )
    assert.strictEqual(
      Roles.effectiveRole([{ principal: "user:u-alice", scope: org, role: "viewer" }], alice, sales),
      "viewer"
    )
  })

  it("counts grants to the actor's groups and e-mail", () => {
    assert.strictEqual(
      Roles.effectiveRole([{ principal: "group:analysts", scope: prod, role: "modeler" }], alice, sales),
      "modeler"
    )
    assert.strictEqual(
      Roles.effectiveRole([{ principal: "user:alice@example.com", scope: sales, role: "viewer" }], alice, sales),
      "viewer"
    )
  })

  it("takes the strongest of direct, inherited and group grants", () => {
    const grants: ReadonlyArray<Roles.Grant> = [
      { principal: "user:u-alice", scope: sales, role: "viewer" },
      { principal: "group:analysts", scope: org, role: "admin" },
      { principal: "user:alice@example.com", scope: prod, role: "modeler" }
    ]
    assert.strictEqual(Roles.effectiveRole(grants, alice, sales), "admin")
    // A weaker direct grant does not cap an inherited one, nor the other way round.
    const weakerInherited: ReadonlyArray<Roles.Grant> = [
      { principal: "user:u-alice", scope: sales, role: "admin" },
      { principal: "user:u-alice", scope: org, role: "viewer" }
    ]
    assert.strictEqual(Roles.effectiveRole(weakerInherited, alice, sales), "admin")
  })

  it("never leaks grants across sibling or child scopes", () => {
    const on = (scope: Roles.PackageLevelScope): ReadonlyArray<Roles.Grant> => [
      { principal: "user:u-alice", scope, role: "admin" }
    ]
    // Environment A's grant does not reach environment B or its packages.
    assert.strictEqual(Roles.effectiveRole(on(dev), alice, prod), undefined)
    assert.strictEqual(Roles.effectiveRole(on(dev), alice, sales), undefined)
    // Package X's grant does not reach package Y, nor the same name in another environment.
    assert.strictEqual(Roles.effectiveRole(on(marketing), alice, sales), undefined)
    assert.strictEqual(Roles.effectiveRole(on(devSales), alice, sales), undefined)
    // A package grant does not reach its environment or organization.
    assert.strictEqual(Roles.effectiveRole(on(sales), alice, prod), undefined)
    assert.strictEqual(Roles.effectiveRole(on(sales), alice, org), undefined)
    // Another organization's grants reach nothing here.
    assert.strictEqual(Roles.effectiveRole(on(Roles.organizationScope("globex")), alice, sales), undefined)
    // Environment grants do not reach workspaces.
    assert.strictEqual(Roles.effectiveRole(on(prod), alice, ws), undefined)
  })

  it("maps organization roles onto workspaces and documents", () => {
    const grants: ReadonlyArray<Roles.Grant> = [{ principal: "user:u-alice", scope: org, role: "modeler" }]
    assert.strictEqual(Roles.effectiveRole(grants, alice, ws), "editor")
    assert.strictEqual(Roles.effectiveRole(grants, alice, doc), "editor")
  })

  it("inherits document roles from the workspace, not from sibling documents", () => {
    const grants: ReadonlyArray<Roles.Grant> = [
      { principal: "group:analysts", scope: ws, role: "viewer" },
      { principal: "user:u-alice", scope: otherDoc, role: "manager" },
      { principal: "user:u-alice", scope: doc, role: "editor" }
    ]
    assert.strictEqual(Roles.effectiveRole(grants, alice, doc), "editor")
    assert.strictEqual(Roles.effectiveRole(grants, alice, ws), "viewer")
    assert.strictEqual(Roles.effectiveRole(grants, alice, Roles.documentScope("acme", "finance", "q3")), "viewer")
    assert.strictEqual(Roles.effectiveRole(grants, alice, Roles.documentScope("acme", "hr", "q1")), undefined)
  })
})

describe("inheritedPermission", () => {
  const grants: ReadonlyArray<Roles.Grant> = [
    { principal: "user:u-alice", scope: sales, role: "admin" },
    { principal: "user:u-alice", scope: org, role: "viewer" },
    { principal: "user:carol@example.com", scope: prod, role: "modeler" },
    { principal: "group:analysts", scope: prod, role: "modeler" },
    { principal: "group:ops", scope: dev, role: "admin" },
    { principal: "user:u-dave", scope: marketing, role: "admin" }
  ]

  it("ignores the package's own grants and takes the parents'", () => {
    assert.strictEqual(Roles.inheritedPermission(grants, "user:u-alice", sales), "viewer")
  })

  it("counts the groups the caller passes for a user", () => {
    assert.strictEqual(Roles.inheritedPermission(grants, "user:u-alice", sales, { groups: ["analysts"] }), "modeler")
    assert.strictEqual(Roles.inheritedPermission(grants, "user:u-eve", sales, { groups: ["analysts"] }), "modeler")
  })

  it("matches an e-mail principal in any case", () => {
    assert.strictEqual(Roles.inheritedPermission(grants, "user:Carol@Example.COM", sales), "modeler")
  })

  it("names a group by its own grants only", () => {
    assert.strictEqual(Roles.inheritedPermission(grants, "group:analysts", sales), "modeler")
    assert.strictEqual(Roles.inheritedPermission(grants, "group:ops", sales, { groups: ["analysts"] }), undefined)
  })

  it("is undefined when only sibling scopes or a malformed principal match", () => {
    assert.strictEqual(Roles.inheritedPermission(grants, "group:ops", sales), undefined)
    assert.strictEqual(Roles.inheritedPermission(grants, "group:ops", devSales), "admin")
    assert.strictEqual(Roles.inheritedPermission(grants, "user:u-dave", sales), undefined)
    assert.strictEqual(Roles.inheritedPermission(grants, "user:u-dave", marketing), undefined)
    assert.strictEqual(Roles.inheritedPermission(grants, "not-a-principal", sales), undefined)
  })
})
