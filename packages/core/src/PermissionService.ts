/**
 * Package permission operations of the admin API: create a grant (or, with
 * `requestPermission`, record an access request), with `inheritedPermission`
 * computed from the environment and organization, and notify the people
 * concerned when asked; list a package's permissions.
 */
import { Context, DateTime, Effect, Layer } from "effect"
import { Access } from "./Access.ts"
import type { Conflict, InsufficientPermissions, ResourceNotFound, ValidationError } from "./Errors.ts"
import * as Naming from "./Naming.ts"
import { Notifier } from "./Notifier.ts"
import { OrganizationRepo } from "./OrganizationRepo.ts"
import * as PackagePermission from "./PackagePermission.ts"
import { PackageRepo } from "./PackageRepo.ts"
import { type GrantRecord, PermissionRepo, toGrant } from "./PermissionRepo.ts"
import * as Roles from "./Roles.ts"
import { UserRepo } from "./UserRepo.ts"
import type { PackageRef } from "./VersionRepo.ts"

/** Any failure of a permission operation, each with its spec code. */
export type PermissionServiceError = ValidationError | InsufficientPermissions | ResourceNotFound | Conflict

/** The outcome of create: a new grant, a replaced grant, or a recorded access request. */
export interface Created {
  readonly kind: "granted" | "replaced" | "requested"
  readonly permission: PackagePermission.PackagePermission
}

/** Permission operations. */
export class PermissionService extends Context.Service<PermissionService, {
  readonly create: (
    actor: Roles.Actor,
    ref: PackageRef,
    input: PackagePermission.PackagePermissionInput,
    options: { readonly requestPermission: boolean; readonly notifyPeople: boolean }
  ) => Effect.Effect<Created, PermissionServiceError>
  readonly list: (actor: Roles.Actor, ref: PackageRef) => Effect.Effect<ReadonlyArray<PackagePermission.PackagePermission>, PermissionServiceError>
}>()("@modelgate/core/PermissionService") {
  /** Permission operations over the ports. */
  static readonly layer = Layer.effect(
    PermissionService,
    Effect.gen(function*() {
      const access = yield* Access
      const permissions = yield* PermissionRepo
      const packages = yield* PackageRepo
      const organizations = yield* OrganizationRepo
      const users = yield* UserRepo
      const notifier = yield* Notifier

      const scopeOf = (ref: PackageRef): Roles.PackageScope => Roles.packageScope(ref.organization, ref.environment, ref.package)
      const what = (ref: PackageRef) => `Package ${ref.package} in ${ref.organization}/${ref.environment}`

      // The groups a user principal belongs to, for the inherited level.
      const groupsOfPrincipal = Effect.fnUntraced(function*(organization: string, userGroupId: string) {
        const principal = Naming.parseUserGroupId(userGroupId)
        if (principal === undefined || principal._tag === "Group") return []
        const userId = principal._tag === "UserId" ? principal.id : (yield* users.findByEmail(principal.email))?.id
        return userId === undefined ? [] : (yield* organizations.groupsOf(organization, userId)).map((g) => g.name)
      })

      // The grants at the package and above, as role grants.
      const grantsAbove = (ref: PackageRef, principals?: ReadonlyArray<string>) =>
        Effect.map(permissions.listAtAny(Roles.ancestors(scopeOf(ref)), principals), (records) =>
          records.flatMap((r) => {
            const grant = toGrant(r)
            return grant === undefined ? [] : [grant]
          }))

      // The level a principal inherits from the environment and organization (directly or through its groups).
      const inheritedOf = Effect.fnUntraced(function*(principal: string, ref: PackageRef) {
        const groups = yield* groupsOfPrincipal(ref.organization, principal)
        const grants = yield* grantsAbove(ref, [principal, ...groups.map((g) => `group:${g}`)])
        return Roles.inheritedPermission(grants, principal, scopeOf(ref), { groups })
      })

      const toResource = Effect.fnUntraced(function*(record: GrantRecord, ref: PackageRef) {
        const inherited = record.principal === undefined ? undefined : yield* inheritedOf(record.principal, ref)
        return {
          ...(record.principal === undefined ? {} : { userGroupId: record.principal }),
          ...(record.workspace === undefined ? {} : { workspace: record.workspace }),
          permission: record.role === "admin" || record.role === "modeler" || record.role === "viewer" ? record.role : "viewer",
          ...(inherited === undefined ? {} : { inheritedPermission: inherited }),
          ...(record.message === undefined ? {} : { message: record.message }),
          createdAt: record.createdAt,
          updatedAt: record.updatedAt
        } satisfies PackagePermission.PackagePermission
      })

      // E-mail addresses of a principal: the address itself, a user's address, or a group's members'.
      const addressesOf = Effect.fnUntraced(function*(organization: string, userGroupId: string) {
        const principal = Naming.parseUserGroupId(userGroupId)
        if (principal === undefined) return []
        if (principal._tag === "UserEmail") return [principal.email]
        if (principal._tag === "UserId") {
          const user = yield* Effect.result(users.get(principal.id))
          return user._tag === "Success" ? [user.success.email] : []
        }
        const group = (yield* organizations.listGroups(organization)).find((g) => g.name === principal.name)
        const members = yield* Effect.forEach(group?.members ?? [], (id) => Effect.result(users.get(id)))
        return members.flatMap((m) => (m._tag === "Success" ? [m.success.email] : []))
      })

      // Package admins: principals with admin at the package or above.
      const adminsOf = (grants: ReadonlyArray<Roles.Grant>, ref: PackageRef) =>
        grants.filter((g) => g.role === "admin" && Roles.contains(g.scope, scopeOf(ref))).map((g) => g.principal)

      const create = Effect.fn("PermissionService.create")(function*(
        actor: Roles.Actor,
        ref: PackageRef,
        input: PackagePermission.PackagePermissionInput,
        options: { readonly requestPermission: boolean; readonly notifyPeople: boolean }
      ) {
        const allowed = yield* access.authorize(actor, "permission.create", scopeOf(ref), what(ref), { requestPermission: options.requestPermission })
        yield* packages.get(ref)
        const request = yield* PackagePermission.prepare(input, actor, { requestPermission: options.requestPermission })
        const now = yield* DateTime.now
        if (allowed.as === "request") {
          const userGroupId = request.grantee._tag === "Principal" ? request.grantee.userGroupId : `user:${actor.userId}`
          yield* permissions.insertRequest({
            id: `${ref.organization}/${ref.environment}/${ref.package}/${userGroupId}/${DateTime.toEpochMillis(now)}`,
            organization: ref.organization, environment: ref.environment, package: ref.package,
            userGroupId, permission: request.permission,
            ...(request.message === undefined ? {} : { message: request.message }),
            status: "pending", createdAt: now, updatedAt: now
          })
          if (options.notifyPeople) {
            const recipients = yield* Effect.forEach(adminsOf(yield* grantsAbove(ref), ref), (p) => addressesOf(ref.organization, p))
            yield* notifier.notify({
              kind: "permission.requested",
              recipients: [...new Set(recipients.flat())],
              subject: `Access requested to ${ref.organization}/${ref.environment}/${ref.package}`,
              body: `${actor.email ?? actor.userId} asks for ${request.permission} on package ${ref.package}.${request.message === undefined ? "" : ` Note: ${request.message}`}`
            })
          }
          const inherited = yield* inheritedOf(userGroupId, ref)
          return {
            kind: "requested" as const,
            permission: {
              userGroupId,
              permission: request.permission,
              ...(inherited === undefined ? {} : { inheritedPermission: inherited }),
              ...(request.message === undefined ? {} : { message: request.message }),
              createdAt: now,
              updatedAt: now
            }
          }
        }

        const grantee = request.grantee
        const { created, record } = yield* permissions.upsert({
          ...(grantee._tag === "Principal" ? { principal: grantee.userGroupId } : { workspace: grantee.workspace }),
          scope: scopeOf(ref),
          role: request.permission,
          ...(request.message === undefined ? {} : { message: request.message }),
          createdAt: now,
          updatedAt: now
        })
        if (options.notifyPeople && grantee._tag === "Principal") {
          yield* notifier.notify({
            kind: "permission.granted",
            recipients: yield* addressesOf(ref.organization, grantee.userGroupId),
            subject: `You were granted ${request.permission} on ${ref.organization}/${ref.environment}/${ref.package}`,
            body: `${actor.email ?? actor.userId} granted ${request.permission} on package ${ref.package}.${request.message === undefined ? "" : ` Note: ${request.message}`}`
          })
        }
        return { kind: created ? "granted" as const : "replaced" as const, permission: yield* toResource(record, ref) }
      })

      const list = Effect.fn("PermissionService.list")(function*(actor: Roles.Actor, ref: PackageRef) {
        yield* access.authorize(actor, "permission.list", scopeOf(ref), what(ref))
        yield* packages.get(ref)
        const records = yield* permissions.listAt(scopeOf(ref))
        return yield* Effect.forEach(records, (r) => toResource(r, ref))
      })

      return PermissionService.of({ create, list })
    })
  )
}
