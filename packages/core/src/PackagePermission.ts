/**
 * The package permission resource: a role granted on a package to a user, a group
 * or a workspace, with the level inherited from the package's environment and
 * organization. A caller without the right to grant may instead request access,
 * which is recorded as an access request for the package's admins to act on.
 */
import { Effect, Schema } from "effect"
import { ValidationError } from "./Errors.ts"
import * as Naming from "./Naming.ts"
import * as Roles from "./Roles.ts"

const optional = Schema.optionalKey
const Time = Schema.DateTimeUtcFromString

/** The PackagePermission resource as read. */
export const PackagePermission = Schema.Struct({
  userGroupId: optional(Naming.UserGroupId),
  workspace: optional(Naming.Identifier),
  permission: Roles.Role,
  inheritedPermission: optional(Roles.Role),
  message: optional(Schema.String),
  createdAt: Time,
  updatedAt: Time
}).annotate({ identifier: "PackagePermission" })
/** The PackagePermission resource as read. */
export type PackagePermission = typeof PackagePermission.Type

/**
 * The request body of create. `permission` is required for a grant and defaults to
 * viewer for an access request; `inheritedPermission`, `createdAt` and `updatedAt`
 * are read-only and ignored.
 */
export const PackagePermissionInput = Schema.Struct({
  userGroupId: optional(Naming.UserGroupId),
  workspace: optional(Naming.Identifier),
  permission: optional(Roles.Role),
  inheritedPermission: optional(Schema.Unknown),
  message: optional(Schema.String.check(Schema.isMaxLength(2000))),
  createdAt: optional(Schema.Unknown),
  updatedAt: optional(Schema.Unknown)
}).annotate({ identifier: "PackagePermissionInput" })
/** The request body of create. */
export type PackagePermissionInput = typeof PackagePermissionInput.Type

/** Who a permission is for: a user or group, or a workspace. */
export type Grantee =
  | { readonly _tag: "Principal"; readonly userGroupId: string }
  | { readonly _tag: "Workspace"; readonly workspace: string }

/** A validated grant request. */
export interface GrantRequest {
  readonly grantee: Grantee
  readonly permission: Roles.Role
  readonly message: string | undefined
}

/** The principal forms that name the actor itself. */
const selfIds = (actor: Roles.Actor): ReadonlyArray<string> => [
  `user:${actor.userId}`,
  ...(actor.email === undefined ? [] : [`user:${actor.email.toLowerCase()}`])
]

/**
 * Validates a create body. Exactly one of `userGroupId` and `workspace` names the
 * grantee. For an access request the grantee is the caller: an omitted
 * `userGroupId` means the caller, naming anyone else is refused.
 */
export const prepare = Effect.fnUntraced(function*(
  input: PackagePermissionInput,
  actor: Roles.Actor,
  options: { readonly requestPermission: boolean }
) {
  if (options.requestPermission) {
    if (input.workspace !== undefined) {
      return yield* new ValidationError({ message: "An access request is for the caller; workspace cannot be given" })
    }
    const requested = input.userGroupId
    if (requested !== undefined && !selfIds(actor).includes(lowerEmail(requested))) {
      return yield* new ValidationError({ message: "An access request is for the caller; userGroupId must name the caller or be omitted" })
    }
    return {
      grantee: { _tag: "Principal", userGroupId: `user:${actor.userId}` },
      permission: input.permission ?? "viewer",
      message: input.message
    } satisfies GrantRequest
  }
  if ((input.userGroupId === undefined) === (input.workspace === undefined)) {
    return yield* new ValidationError({ message: "Exactly one of userGroupId and workspace is required" })
  }
  if (input.permission === undefined) {
    return yield* new ValidationError({ message: "permission is required: admin, modeler or viewer" })
  }
  const grantee: Grantee = input.userGroupId !== undefined
    ? { _tag: "Principal", userGroupId: lowerEmail(input.userGroupId) }
    : { _tag: "Workspace", workspace: input.workspace ?? "" }
  return { grantee, permission: input.permission, message: input.message } satisfies GrantRequest
})

// E-mail addresses compare case-insensitively: store them lower-cased.
const lowerEmail = (userGroupId: string): string => {
  const principal = Naming.parseUserGroupId(userGroupId)
  return principal === undefined ? userGroupId : Naming.formatUserGroupId(principal)
}

/** States of an access request. */
export const AccessRequestStatus = Schema.Literals(["pending", "granted", "denied"])

/** A stored access request: someone asked for a role on a package. */
export const AccessRequest = Schema.Struct({
  id: Schema.String,
  organization: Schema.String,
  environment: Schema.String,
  package: Schema.String,
  userGroupId: Schema.String,
  permission: Roles.Role,
  message: optional(Schema.String),
  status: AccessRequestStatus,
  createdAt: Time,
  updatedAt: Time
}).annotate({ identifier: "AccessRequest" })
/** A stored access request. */
export type AccessRequest = typeof AccessRequest.Type
