/**
 * Who may do what: one table of operations, each with the level it acts on and
 * the weakest role it needs there, and a pure decision over an actor's grants.
 * The admin API and the MCP server both ask this module, so a rule lives once.
 */
import { Effect, Schema } from "effect"
import * as Errors from "./Errors.ts"
import * as Roles from "./Roles.ts"

/** What an operation needs: a role of at least `minimum` at a scope of `level`. */
export type Requirement =
  | {
    readonly level: "Organization" | "Environment" | "Package"
    readonly minimum: Roles.Role
    /** When set, any authenticated caller may ask with `requestPermission: true`, which records an access request. */
    readonly requestable?: true
  }
  | {
    readonly level: "Workspace" | "Document"
    readonly minimum: Roles.WorkspaceRole
    readonly requestable?: true
  }

/**
 * Every operation and what it needs: the single source of truth. Roles form a
 * lattice, so "admin or modeler" is written as `minimum: "modeler"`. To add an
 * operation, add a row; the type of `decide` follows.
 */
export const operations = {
  // The spec: update connection needs environment admin. Creating and
  // deleting a connection handle the same credentials, so they need the same.
  "connection.create": { level: "Environment", minimum: "admin" },
  "connection.update": { level: "Environment", minimum: "admin" },
  "connection.delete": { level: "Environment", minimum: "admin" },
  // Reads never return secrets (write-only secrets are never returned), so viewers may read.
  "connection.read": { level: "Environment", minimum: "viewer" },
  "connection.list": { level: "Environment", minimum: "viewer" },
  // The spec: Modeler creates and modifies models and packages.
  "package.create": { level: "Environment", minimum: "modeler" },
  // The spec: update version status needs package admin or modeler; publishing is modifying a package.
  "version.publish": { level: "Package", minimum: "modeler" },
  "version.updateStatus": { level: "Package", minimum: "modeler" },
  "version.read": { level: "Package", minimum: "viewer" },
  "version.list": { level: "Package", minimum: "viewer" },
  // The spec: create package permission needs package admin or modeler unless
  // requestPermission is true, in which case the caller asks for access.
  "permission.create": { level: "Package", minimum: "modeler", requestable: true },
  "permission.list": { level: "Package", minimum: "viewer" },
  // The MCP tools read published models: viewers are read-only users.
  "query.execute": { level: "Package", minimum: "viewer" },
  "context.read": { level: "Package", minimum: "viewer" },
  // The MCP workspace-scoped URL restricts analysis to a workspace's packages:
  // reading the workspace needs a workspace role.
  "workspace.read": { level: "Workspace", minimum: "viewer" },
  "workspace.update": { level: "Workspace", minimum: "manager" },
  "document.read": { level: "Document", minimum: "viewer" },
  "document.update": { level: "Document", minimum: "editor" }
} as const satisfies Record<string, Requirement>

/** The name of an operation of the table. */
export type Operation = keyof typeof operations

/** The operation names, in the table's order. */
export const operationNames: ReadonlyArray<Operation> = Object.keys(operations).filter(
  (name): name is Operation => Object.hasOwn(operations, name)
)

/** An operation name as a Schema, for audit records and wire formats. */
export const OperationName = Schema.Literals(operationNames)

/** What an operation needs. */
export const requirementOf = (operation: Operation): Requirement => operations[operation]

/** The scope an operation acts on, by the level of its table row. */
export type ScopeFor<Op extends Operation> = Roles.ScopeAt<(typeof operations)[Op]["level"]>

/** Options of a decision: `requestPermission` as sent on the create-permission endpoint. */
export interface Options {
  readonly requestPermission?: boolean | undefined
}

/**
 * The outcome of a decision. `Allowed` says why: `role` (the actor's effective
 * role meets the requirement), `system` (the operator or seed), or `request`
 * (the caller asked with `requestPermission: true`: record an access request,
 * never a grant).
 */
export type Decision =
  | { readonly _tag: "Allowed"; readonly as: "role"; readonly role: Roles.AnyRole }
  | { readonly _tag: "Allowed"; readonly as: "system" }
  | { readonly _tag: "Allowed"; readonly as: "request" }
  | { readonly _tag: "Denied"; readonly reason: string }

/** A decision that allows. */
export type Allowed = Extract<Decision, { readonly _tag: "Allowed" }>

const levelWord: { readonly [L in Roles.Level]: string } = {
  Organization: "organization",
  Environment: "environment",
  Package: "package",
  Workspace: "workspace",
  Document: "document"
}

const joinOr = (words: ReadonlyArray<string>): string =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`

/** The requirement in the spec's words, e.g. `package admin or modeler permission`. */
export const describeRequirement = (requirement: Requirement): string =>
  `${levelWord[requirement.level]} ${joinOr(Roles.rolesAtLeast(requirement.minimum))} permission`

/**
 * Decides whether `actor` may perform `operation` at `scope`, given the grants
 * that could reach it (callers may pass more; grants elsewhere never count).
 * A system actor is always allowed. With `requestPermission: true` on a
 * requestable operation, any authenticated caller is allowed `as: "request"`,
 * even one who could grant: the flag asks for access, it never grants. On other
 * operations the flag is ignored.
 */
export const decide = <Op extends Operation>(
  grants: Iterable<Roles.Grant>,
  actor: Roles.Actor,
  operation: Op,
  scope: ScopeFor<Op>,
  options?: Options
): Decision => {
  const requirement = requirementOf(operation)
  const target: Roles.Scope = scope
  if (options?.requestPermission === true && requirement.requestable === true) {
    return { _tag: "Allowed", as: "request" }
  }
  if (actor.system === true) return { _tag: "Allowed", as: "system" }
  // A scope of the wrong level is a caller's mistake; refuse rather than guess
  // which ancestor or descendant was meant.
  if (target._tag !== requirement.level) {
    return {
      _tag: "Denied",
      reason: `${operation} applies at the ${levelWord[requirement.level]} level, not the ${levelWord[target._tag]} level`
    }
  }
  const role = Roles.effectiveRole(grants, actor, target)
  if (role !== undefined && Roles.rank(role) >= Roles.rank(requirement.minimum)) {
    return { _tag: "Allowed", as: "role", role }
  }
  return { _tag: "Denied", reason: `${operation} requires ${describeRequirement(requirement)}` }
}

/** Whether `decide` allows (a request counts as allowed: the caller may ask). */
export const can = <Op extends Operation>(
  grants: Iterable<Roles.Grant>,
  actor: Roles.Actor,
  operation: Op,
  scope: ScopeFor<Op>,
  options?: Options
): boolean => decide(grants, actor, operation, scope, options)._tag === "Allowed"

/**
 * `decide` as an Effect: succeeds with the `Allowed` decision, fails with
 * INSUFFICIENT_PERMISSIONS naming the required role and level. Check `as` on
 * requestable operations: `"request"` means record a request, not a grant.
 */
export const require = <Op extends Operation>(
  grants: Iterable<Roles.Grant>,
  actor: Roles.Actor,
  operation: Op,
  scope: ScopeFor<Op>,
  options?: Options
): Effect.Effect<Allowed, Errors.InsufficientPermissions> => {
  const decision = decide(grants, actor, operation, scope, options)
  return decision._tag === "Allowed"
    ? Effect.succeed(decision)
    : Effect.fail(new Errors.InsufficientPermissions({ message: decision.reason }))
}
