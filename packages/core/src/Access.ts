/**
 * Authorization as a service: it loads an organization's grants and the actor's
 * stored group memberships through the ports, then asks Policy. A caller with no
 * role at all where a resource lives gets RESOURCE_NOT_FOUND (its existence is not
 * revealed); a caller who can see it but lacks the role gets INSUFFICIENT_PERMISSIONS.
 */
import { Context, Effect, Layer } from "effect"
import { InsufficientPermissions, ResourceNotFound } from "./Errors.ts"
import { OrganizationRepo } from "./OrganizationRepo.ts"
import { PermissionRepo, toGrant } from "./PermissionRepo.ts"
import * as Policy from "./Policy.ts"
import * as Roles from "./Roles.ts"

/** The grants of an organization as role grants, and the actor with its stored groups. */
export interface AccessContext {
  readonly grants: ReadonlyArray<Roles.Grant>
  readonly actor: Roles.Actor
}

/** Authorization over stored grants. */
export class Access extends Context.Service<Access, {
  /** The actor's grants that bear on `scope` (made there or above, to it or its groups) and the actor with its stored groups. */
  readonly context: (actor: Roles.Actor, scope: Roles.Scope) => Effect.Effect<AccessContext>
  /**
   * Allows `operation` at `scope` or fails: RESOURCE_NOT_FOUND (naming `what`) when
   * the actor has no role there, INSUFFICIENT_PERMISSIONS when its role is too weak.
   */
  readonly authorize: <Op extends Policy.Operation>(
    actor: Roles.Actor,
    operation: Op,
    scope: Policy.ScopeFor<Op>,
    what: string,
    options?: Policy.Options
  ) => Effect.Effect<Policy.Allowed & { readonly context: AccessContext }, InsufficientPermissions | ResourceNotFound>
}>()("@modelgate/core/Access") {
  /** Access over PermissionRepo and OrganizationRepo. */
  static readonly layer = Layer.effect(
    Access,
    Effect.gen(function*() {
      const permissions = yield* PermissionRepo
      const organizations = yield* OrganizationRepo

      // Only the actor's own grants (as itself or a group) at the scope and its ancestors can
      // decide there: the cost grows with neither the organization nor the package's audience.
      const context = Effect.fn("Access.context")(function*(actor: Roles.Actor, scope: Roles.Scope) {
        const groups = yield* organizations.groupsOf(scope.organization, actor.userId)
        const allGroups = [...new Set([...actor.groups, ...groups.map((g) => g.name)])]
        const principals = [
          `user:${actor.userId}`,
          ...(actor.email === undefined ? [] : [`user:${actor.email.toLowerCase()}`]),
          ...allGroups.map((g) => `group:${g}`)
        ]
        const records = yield* permissions.listAtAny(Roles.ancestors(scope), principals)
        const grants = records.flatMap((r) => {
          const grant = toGrant(r)
          return grant === undefined ? [] : [grant]
        })
        return { grants, actor: { ...actor, groups: allGroups } }
      })

      const authorize = <Op extends Policy.Operation>(
        actor: Roles.Actor,
        operation: Op,
        scope: Policy.ScopeFor<Op>,
        what: string,
        options?: Policy.Options
      ) =>
        Effect.gen(function*() {
          // Every scope names its organization; the generic ScopeFor hides that from the checker.
          const target: Roles.Scope = scope
          const ctx = yield* context(actor, target)
          const decision = Policy.decide(ctx.grants, ctx.actor, operation, scope, options)
          if (decision._tag === "Allowed") return { ...decision, context: ctx }
          // No role at all at the scope: do not reveal that the resource exists.
          if (Roles.effectiveRole(ctx.grants, ctx.actor, target) === undefined) {
            return yield* new ResourceNotFound({ message: `${what} not found` })
          }
          return yield* new InsufficientPermissions({ message: decision.reason })
        }).pipe(Effect.withSpan("Access.authorize", { attributes: { operation } }))

      return Access.of({ context, authorize })
    })
  )
}
