/**
 * The storage port of permissions: grants of a role to a user or group at any
 * level (organization, environment, package, workspace, document), a package's
 * grants to workspaces, and access requests. Role decisions are made by Roles and
 * Policy from the grants this port returns.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { ResourceNotFound } from "./Errors.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"
import * as Naming from "./Naming.ts"
import { AccessRequest } from "./PackagePermission.ts"
import * as Roles from "./Roles.ts"

const optional = Schema.optionalKey

/**
 * A stored grant: to a principal (userGroupId) at any scope, or, at package scope,
 * to a workspace (the package is then available in that workspace).
 */
export const GrantRecord = Schema.Struct({
  principal: optional(Naming.UserGroupId),
  workspace: optional(Naming.Identifier),
  scope: Roles.Scope,
  role: Schema.Union([Roles.Role, Roles.WorkspaceRole]),
  message: optional(Schema.String),
  createdAt: Schema.DateTimeUtcFromString,
  updatedAt: Schema.DateTimeUtcFromString
}).annotate({ identifier: "GrantRecord" })
/** A stored grant. */
export type GrantRecord = typeof GrantRecord.Type

const decodeGrant = Schema.decodeUnknownOption(Roles.Grant)

/** The role grant of a record that names a principal; workspace grants give none. */
export const toGrant = (record: GrantRecord): Roles.Grant | undefined => {
  if (record.principal === undefined) return undefined
  const grant = decodeGrant({ principal: record.principal, scope: record.scope, role: record.role })
  return grant._tag === "Some" ? grant.value : undefined
}

/** The grantee key of a record: its principal or `workspace:<name>`. */
export const granteeOf = (record: GrantRecord): string => record.principal ?? `workspace:${record.workspace ?? ""}`

/** Storage of grants and access requests. */
export class PermissionRepo extends Context.Service<PermissionRepo, {
  /** Every grant in an organization (all levels). */
  readonly listGrants: (organization: string) => Effect.Effect<ReadonlyArray<GrantRecord>>
  /**
   * The grants made at any of `scopes` (a scope and its ancestors: what a decision there
   * needs), to any of `principals` when given (the caller and its groups).
   */
  readonly listAtAny: (scopes: ReadonlyArray<Roles.Scope>, principals?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<GrantRecord>>
  /** The grants made exactly at `scope`. */
  readonly listAt: (scope: Roles.Scope) => Effect.Effect<ReadonlyArray<GrantRecord>>
  /** Creates or replaces the grant of one grantee at one scope; tells whether it was new. */
  readonly upsert: (record: GrantRecord) => Effect.Effect<{ readonly record: GrantRecord; readonly created: boolean }>
  readonly remove: (scope: Roles.Scope, grantee: string) => Effect.Effect<void, ResourceNotFound>
  readonly insertRequest: (request: AccessRequest) => Effect.Effect<AccessRequest>
  readonly listRequests: (scope: Roles.PackageScope) => Effect.Effect<ReadonlyArray<AccessRequest>>
}>()("@modelgate/core/PermissionRepo") {
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    PermissionRepo,
    Effect.gen(function*() {
      const key = (scope: Roles.Scope, grantee: string) => MemoryTable.keyOf(Roles.key(scope), grantee)
      const grants = yield* MemoryTable.make<GrantRecord>((r) => key(r.scope, granteeOf(r)), (k) => `Permission ${k}`)
      const requests = yield* MemoryTable.make<AccessRequest>((r) => r.id, (k) => `Access request ${k}`)
      return PermissionRepo.of({
        listGrants: (organization) => grants.list((r) => r.scope.organization === organization),
        listAt: (scope) => grants.list((r) => Roles.equals(r.scope, scope)),
        listAtAny: (scopes, principals) => {
          const keys = new Set(scopes.map(Roles.key))
          const named = principals === undefined ? undefined : new Set(principals)
          return grants.list((r) => keys.has(Roles.key(r.scope)) && (named === undefined || (r.principal !== undefined && named.has(r.principal))))
        },
        upsert: (record) =>
          grants.modify((rows) => {
            const k = key(record.scope, granteeOf(record))
            const existing = rows.get(k)
            // Replacing keeps the original creation time.
            const stored = existing === undefined ? record : { ...record, createdAt: existing.createdAt }
            return [{ record: stored, created: existing === undefined }, new Map(rows).set(k, stored)]
          }),
        remove: (scope, grantee) => grants.remove(key(scope, grantee)),
        insertRequest: requests.upsert,
        listRequests: (scope) =>
          requests.list((r) => r.organization === scope.organization && r.environment === scope.environment && r.package === scope.package)
      })
    })
  )
}

export { AccessRequest }
