/**
 * The role lattices, the scopes where grants live, and the rules that turn a
 * set of grants into the role an actor holds at a scope. Everything here is a
 * pure function of plain data: storage loads the grants, `Policy` decides.
 */
import { Schema } from "effect"
import * as Naming from "./Naming.ts"

// ---------------------------------------------------------------------------
// Roles
// ---------------------------------------------------------------------------

/** Package-hierarchy roles, weakest first: `viewer ⊆ modeler ⊆ admin`. */
export const roleOrder = ["viewer", "modeler", "admin"] as const

/** A role on the organization → environment → package chain (the spec's package permission roles). */
export const Role = Schema.Literals(roleOrder).annotate({ identifier: "Role" })

/** A role on the organization → environment → package chain. */
export type Role = typeof Role.Type

/** Workspace and document roles, weakest first: `viewer ⊆ editor ⊆ manager`. */
export const workspaceRoleOrder = ["viewer", "editor", "manager"] as const

/** A role on a workspace or a document (the spec's Manager, Editor and Viewer). */
export const WorkspaceRole = Schema.Literals(workspaceRoleOrder).annotate({ identifier: "WorkspaceRole" })

/** A role on a workspace or a document. */
export type WorkspaceRole = typeof WorkspaceRole.Type

/** A role of either lattice. */
export type AnyRole = Role | WorkspaceRole

// Both lattices have three ranks, so one table serves both; the typed helpers
// below keep a caller from comparing across lattices by accident.
const rankOf: { readonly [R in AnyRole]: number } = {
  viewer: 0,
  modeler: 1,
  editor: 1,
  admin: 2,
  manager: 2
}

/** The rank of a role within its lattice: 0 for viewer, 2 for admin or manager. */
export const rank = (role: AnyRole): number => rankOf[role]

/** Whether `held` includes `required` (`undefined`, no role, includes nothing). */
export const atLeast = <R extends AnyRole>(held: R | undefined, required: R): boolean =>
  held !== undefined && rankOf[held] >= rankOf[required]

/** The strongest of two roles of the same lattice; `undefined` counts as no role. */
export const max = <R extends AnyRole>(a: R | undefined, b: R | undefined): R | undefined => {
  if (a === undefined) return b
  if (b === undefined) return a
  return rankOf[b] > rankOf[a] ? b : a
}

/** The strongest of some roles of the same lattice; `undefined` when there are none. */
export const strongest = <R extends AnyRole>(roles: Iterable<R | undefined>): R | undefined => {
  let best: R | undefined = undefined
  for (const role of roles) best = max(best, role)
  return best
}

/** The roles that include `minimum`, strongest first (`modeler` → `["admin", "modeler"]`). */
export function rolesAtLeast(minimum: Role): ReadonlyArray<Role>
export function rolesAtLeast(minimum: WorkspaceRole): ReadonlyArray<WorkspaceRole>
export function rolesAtLeast(minimum: AnyRole): ReadonlyArray<AnyRole>
export function rolesAtLeast(minimum: AnyRole): ReadonlyArray<AnyRole> {
  const order: ReadonlyArray<AnyRole> = isRole(minimum) ? roleOrder : workspaceRoleOrder
  return order.filter((role) => rankOf[role] >= rankOf[minimum]).reverse()
}

const isRole = Schema.is(Role)

/**
 * How an organization role reaches workspaces and documents: admin ⇒ manager,
 * modeler ⇒ editor, viewer ⇒ viewer (the spec says a lower level inherits from
 * its parent, and the organization is the parent of its workspaces).
 */
export const toWorkspaceRole = (role: Role): WorkspaceRole => {
  switch (role) {
    case "admin":
      return "manager"
    case "modeler":
      return "editor"
    case "viewer":
      return "viewer"
  }
}

// ---------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------

/** The organization level. */
export const OrganizationScope = Schema.TaggedStruct("Organization", {
  organization: Schema.String
})

/** The environment level, child of an organization. */
export const EnvironmentScope = Schema.TaggedStruct("Environment", {
  organization: Schema.String,
  environment: Schema.String
})

/** The package level, child of an environment. */
export const PackageScope = Schema.TaggedStruct("Package", {
  organization: Schema.String,
  environment: Schema.String,
  package: Schema.String
})

/** The workspace level, child of an organization. */
export const WorkspaceScope = Schema.TaggedStruct("Workspace", {
  organization: Schema.String,
  workspace: Schema.String
})

/** The document level, child of a workspace. */
export const DocumentScope = Schema.TaggedStruct("Document", {
  organization: Schema.String,
  workspace: Schema.String,
  document: Schema.String
})

/** An organization scope. */
export type OrganizationScope = typeof OrganizationScope.Type
/** An environment scope. */
export type EnvironmentScope = typeof EnvironmentScope.Type
/** A package scope. */
export type PackageScope = typeof PackageScope.Type
/** A workspace scope. */
export type WorkspaceScope = typeof WorkspaceScope.Type
/** A document scope. */
export type DocumentScope = typeof DocumentScope.Type

/** A scope of the organization → environment → package chain, where `Role`s are granted. */
export const PackageLevelScope = Schema.Union([OrganizationScope, EnvironmentScope, PackageScope])

/** A scope of the organization → environment → package chain. */
export type PackageLevelScope = typeof PackageLevelScope.Type

/** A scope below an organization on the workspace → document chain, where `WorkspaceRole`s are granted. */
export const WorkspaceLevelScope = Schema.Union([WorkspaceScope, DocumentScope])

/** A workspace or document scope. */
export type WorkspaceLevelScope = typeof WorkspaceLevelScope.Type

/** Any scope where a grant can exist, as plain data tagged by its level. */
export const Scope = Schema.Union([OrganizationScope, EnvironmentScope, PackageScope, WorkspaceScope, DocumentScope])
  .pipe(Schema.toTaggedUnion("_tag"))

/** Any scope where a grant can exist. */
export type Scope = typeof Scope.Type

/** The level of a scope: `"Organization"`, `"Environment"`, `"Package"`, `"Workspace"` or `"Document"`. */
export type Level = Scope["_tag"]

/** The scope of one level, by its tag. */
export type ScopeAt<L extends Level> = Extract<Scope, { readonly _tag: L }>

/** An organization scope. */
export const organizationScope = (organization: string): OrganizationScope => ({ _tag: "Organization", organization })

/** An environment scope. */
export const environmentScope = (organization: string, environment: string): EnvironmentScope => ({
  _tag: "Environment",
  organization,
  environment
})

/** A package scope. */
export const packageScope = (organization: string, environment: string, pkg: string): PackageScope => ({
  _tag: "Package",
  organization,
  environment,
  package: pkg
})

/** A workspace scope. */
export const workspaceScope = (organization: string, workspace: string): WorkspaceScope => ({
  _tag: "Workspace",
  organization,
  workspace
})

/** A document scope. */
export const documentScope = (organization: string, workspace: string, document: string): DocumentScope => ({
  _tag: "Document",
  organization,
  workspace,
  document
})

/** The parent of a scope; `undefined` for an organization. */
export const parent = (scope: Scope): Scope | undefined => {
  switch (scope._tag) {
    case "Organization":
      return undefined
    case "Environment":
    case "Workspace":
      return organizationScope(scope.organization)
    case "Package":
      return environmentScope(scope.organization, scope.environment)
    case "Document":
      return workspaceScope(scope.organization, scope.workspace)
  }
}

/**
 * The scope and its ancestors, the scope itself first and its organization
 * last: exactly the scopes whose grants reach it (a lower level inherits from
 * its parent).
 */
export function ancestors(scope: PackageLevelScope): ReadonlyArray<PackageLevelScope>
export function ancestors(scope: Scope): ReadonlyArray<Scope>
export function ancestors(scope: Scope): ReadonlyArray<Scope> {
  const chain: Array<Scope> = []
  for (let current: Scope | undefined = scope; current !== undefined; current = parent(current)) chain.push(current)
  return chain
}

/** A string that identifies a scope: equal keys mean the same scope. */
export const key = (scope: Scope): string => {
  // JSON of the tagged tuple, so names with any characters cannot collide.
  switch (scope._tag) {
    case "Organization":
      return JSON.stringify([scope._tag, scope.organization])
    case "Environment":
      return JSON.stringify([scope._tag, scope.organization, scope.environment])
    case "Package":
      return JSON.stringify([scope._tag, scope.organization, scope.environment, scope.package])
    case "Workspace":
      return JSON.stringify([scope._tag, scope.organization, scope.workspace])
    case "Document":
      return JSON.stringify([scope._tag, scope.organization, scope.workspace, scope.document])
  }
}

/** Whether two scopes are the same scope. */
export const equals = (a: Scope, b: Scope): boolean => key(a) === key(b)

/** Whether `outer` is `inner` or one of its ancestors, so that a grant at `outer` reaches `inner`. */
export const contains = (outer: Scope, inner: Scope): boolean => {
  const outerKey = key(outer)
  return ancestors(inner).some((scope) => key(scope) === outerKey)
}

// ---------------------------------------------------------------------------
// Grants and actors
// ---------------------------------------------------------------------------

/** A grant of a package-hierarchy role at an organization, environment or package. */
export const PackageGrant = Schema.Struct({
  principal: Naming.UserGroupId,
  scope: PackageLevelScope,
  role: Role
}).annotate({ identifier: "PackageGrant" })

/** A grant of a workspace role at a workspace or document. */
export const WorkspaceGrant = Schema.Struct({
  principal: Naming.UserGroupId,
  scope: WorkspaceLevelScope,
  role: WorkspaceRole
}).annotate({ identifier: "WorkspaceGrant" })

/**
 * A role granted to a principal (`user:<email>`, `user:<user_id>` or
 * `group:<name>`) at a scope. The role's lattice follows the scope: a
 * workspace role at an organization, or a package role at a document, does not
 * decode.
 */
export const Grant = Schema.Union([PackageGrant, WorkspaceGrant]).annotate({ identifier: "Grant" })

/** A role granted to a principal at a scope. */
export type Grant = typeof Grant.Type

/**
 * The authenticated caller: a user id, an e-mail address when known, the names
 * of the groups the user belongs to, and `system: true` for the operator or the
 * seed, which `Policy` always allows.
 */
export const Actor = Schema.Struct({
  userId: Schema.String,
  email: Schema.optionalKey(Schema.String),
  groups: Schema.Array(Schema.String),
  system: Schema.optionalKey(Schema.Literal(true))
}).annotate({ identifier: "Actor" })

/** The authenticated caller. */
export type Actor = typeof Actor.Type

/**
 * Whether a userGroupId names the actor: `user:<id>` by exact user id,
 * `user:<email>` by e-mail address compared case-insensitively, `group:<name>`
 * when the actor is a member of that group. A malformed userGroupId names nobody.
 */
export const namesActor = (principal: string, actor: Actor): boolean => {
  const parsed = Naming.parseUserGroupId(principal)
  if (parsed === undefined) return false
  switch (parsed._tag) {
    case "UserId":
      return parsed.id === actor.userId
    case "UserEmail":
      // parseUserGroupId lower-cases the address; the actor's may be in any case.
      return actor.email !== undefined && actor.email.toLowerCase() === parsed.email
    case "Group":
      return actor.groups.includes(parsed.name)
  }
}

// The role a grant confers at `target`, in `target`'s lattice; undefined when
// the grant's scope is not `target` or one of its ancestors.
const conferred = (grant: Grant, target: Scope): AnyRole | undefined => {
  if (!contains(grant.scope, target)) return undefined
  if (isWorkspaceLevel(target) && !isWorkspaceLevel(grant.scope) && isRole(grant.role)) {
    // Only an organization grant reaches a workspace-level scope from the
    // package lattice; it maps admin ⇒ manager, modeler ⇒ editor, viewer ⇒ viewer.
    return toWorkspaceRole(grant.role)
  }
  return grant.role
}

const isWorkspaceLevel = (scope: Scope): scope is WorkspaceLevelScope =>
  scope._tag === "Workspace" || scope._tag === "Document"

const strongestMatching = (
  grants: Iterable<Grant>,
  matches: (principal: string) => boolean,
  target: Scope
): AnyRole | undefined => {
  let best: AnyRole | undefined = undefined
  for (const grant of grants) {
    if (!matches(grant.principal)) continue
    best = max(best, conferred(grant, target))
  }
  return best
}

/**
 * The role the actor holds at a scope: the strongest of every grant at the
 * scope or one of its ancestors whose principal names the actor, directly or
 * through one of its groups; `undefined` when none does. Grants at sibling or
 * child scopes never count. A `system` actor gets no role here: `Policy`
 * allows it without one.
 */
export function effectiveRole(grants: Iterable<Grant>, actor: Actor, scope: PackageLevelScope): Role | undefined
export function effectiveRole(grants: Iterable<Grant>, actor: Actor, scope: WorkspaceLevelScope): WorkspaceRole | undefined
export function effectiveRole(grants: Iterable<Grant>, actor: Actor, scope: Scope): AnyRole | undefined
export function effectiveRole(grants: Iterable<Grant>, actor: Actor, scope: Scope): AnyRole | undefined {
  return strongestMatching(grants, (principal) => namesActor(principal, actor), scope)
}

/**
 * The spec's `inheritedPermission` of a package permission: the strongest role
 * that `principal` holds at the package's environment or organization (never
 * at the package itself, nor at sibling environments or packages); `undefined`
 * when it holds none there.
 *
 * `principal` is a userGroupId. Grants match it by the same form: `user:<email>`
 * matches grants to that address in any case, `user:<id>` grants to that id,
 * `group:<name>` grants to that group. For a user, `options.groups` names the
 * groups it belongs to, whose grants count too; for a group they are ignored.
 * A user named by e-mail does not match grants naming it by id: to count both,
 * resolve the user to an `Actor` and use `effectiveRole` at the package's
 * environment, which this equals.
 */
export const inheritedPermission = (
  grants: Iterable<Grant>,
  principal: string,
  scope: PackageScope,
  options?: { readonly groups?: ReadonlyArray<string> | undefined }
): Role | undefined => {
  const named = Naming.parseUserGroupId(principal)
  if (named === undefined) return undefined
  const groups = named._tag === "Group" ? [] : options?.groups ?? []
  const matches = (candidate: string): boolean => {
    const parsed = Naming.parseUserGroupId(candidate)
    if (parsed === undefined) return false
    if (parsed._tag === "Group" && groups.includes(parsed.name)) return true
    return Naming.formatUserGroupId(parsed) === Naming.formatUserGroupId(named)
  }
  const environment = environmentScope(scope.organization, scope.environment)
  const role = strongestMatching(grants, matches, environment)
  // Only package-lattice grants reach an environment, so the role is a Role.
  return role !== undefined && isRole(role) ? role : undefined
}
