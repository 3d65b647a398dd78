/**
 * PermissionRepo on PostgreSQL: one row per grantee and scope (a user or group
 * principal, or a workspace at package scope), and access requests.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, PackagePermission, PermissionRepo, Roles } from "@modelgate/core"
import { iso, json, time } from "./internal/rows.ts"

type GrantRecord = PermissionRepo.GrantRecord

interface GrantRow {
  readonly scope: unknown
  readonly principal: string | null
  readonly workspace: string | null
  readonly role: string
  readonly message: string | null
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly inserted?: boolean
}

const decodeScope = Schema.decodeUnknownSync(Roles.Scope)
const decodeRole = Schema.decodeUnknownSync(Schema.Union([Roles.Role, Roles.WorkspaceRole]))
const decodeRequest = Schema.decodeUnknownSync(PackagePermission.AccessRequest)

const fromRow = (row: GrantRow): GrantRecord => ({
  ...(row.principal === null ? {} : { principal: row.principal }),
  ...(row.workspace === null ? {} : { workspace: row.workspace }),
  scope: decodeScope(json(row.scope)),
  role: decodeRole(row.role),
  ...(row.message === null ? {} : { message: row.message }),
  createdAt: time(row.created_at),
  updatedAt: time(row.updated_at)
})

interface RequestRow {
  readonly id: string
  readonly organization: string
  readonly environment: string
  readonly package: string
  readonly user_group_id: string
  readonly permission: string
  readonly message: string | null
  readonly status: string
  readonly created_at: unknown
  readonly updated_at: unknown
}

const requestFromRow = (row: RequestRow): PackagePermission.AccessRequest =>
  decodeRequest({
    id: row.id,
    organization: row.organization,
    environment: row.environment,
    package: row.package,
    userGroupId: row.user_group_id,
    permission: row.permission,
    ...(row.message === null ? {} : { message: row.message }),
    status: row.status,
    createdAt: iso(time(row.created_at)),
    updatedAt: iso(time(row.updated_at))
  })

/** PermissionRepo over SqlClient. */
export const layer = Layer.effect(
  PermissionRepo.PermissionRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const scopeJson = (scope: Roles.Scope) => JSON.stringify(Schema.encodeSync(Roles.Scope)(scope))

    const listGrants = (organization: string) =>
      Effect.orDie(sql<GrantRow>`SELECT * FROM grants WHERE organization = ${organization} ORDER BY scope_key, grantee`).pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.withSpan("SqlPermissionRepo.listGrants")
      )

    const listAt = (scope: Roles.Scope) =>
      Effect.orDie(sql<GrantRow>`SELECT * FROM grants WHERE scope_key = ${Roles.key(scope)} ORDER BY grantee`).pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.withSpan("SqlPermissionRepo.listAt")
      )

    const listAtAny = (scopes: ReadonlyArray<Roles.Scope>, principals?: ReadonlyArray<string>) =>
      Effect.orDie(
        principals === undefined
          ? sql<GrantRow>`SELECT * FROM grants WHERE scope_key = ANY(${scopes.map(Roles.key)}::text[]) ORDER BY scope_key, grantee`
          : sql<GrantRow>`
              SELECT * FROM grants WHERE scope_key = ANY(${scopes.map(Roles.key)}::text[]) AND grantee = ANY(${principals}::text[])
              ORDER BY scope_key, grantee`
      ).pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.withSpan("SqlPermissionRepo.listAtAny")
      )

    const upsert = Effect.fn("SqlPermissionRepo.upsert")(function*(record: GrantRecord) {
      // xmax = 0 only for a freshly inserted row: tells a new grant from a replaced one.
      const rows = yield* Effect.orDie(sql<GrantRow>`
        INSERT INTO grants (organization, scope_key, scope, grantee, principal, workspace, role, message, created_at, updated_at)
        VALUES (${record.scope.organization}, ${Roles.key(record.scope)}, ${scopeJson(record.scope)}::jsonb,
          ${PermissionRepo.granteeOf(record)}, ${record.principal ?? null}, ${record.workspace ?? null}, ${record.role},
          ${record.message ?? null}, ${iso(record.createdAt)}::timestamptz, ${iso(record.updatedAt)}::timestamptz)
        ON CONFLICT (scope_key, grantee) DO UPDATE SET role = EXCLUDED.role, message = EXCLUDED.message, updated_at = EXCLUDED.updated_at
        RETURNING *, (xmax = 0) AS inserted`)
      const row = rows[0]
      if (row === undefined) return yield* Effect.die(new Error("upsert returned no row"))
      return { record: fromRow(row), created: row.inserted === true }
    })

    const remove = Effect.fn("SqlPermissionRepo.remove")(function*(scope: Roles.Scope, grantee: string) {
      const rows = yield* Effect.orDie(sql`DELETE FROM grants WHERE scope_key = ${Roles.key(scope)} AND grantee = ${grantee} RETURNING grantee`)
      if (rows.length === 0) return yield* new Errors.ResourceNotFound({ message: `Permission of ${grantee} not found` })
    })

    const insertRequest = Effect.fn("SqlPermissionRepo.insertRequest")(function*(request: PackagePermission.AccessRequest) {
      yield* Effect.orDie(sql`
        INSERT INTO access_requests (id, organization, environment, package, user_group_id, permission, message, status, created_at, updated_at)
        VALUES (${request.id}, ${request.organization}, ${request.environment}, ${request.package}, ${request.userGroupId},
          ${request.permission}, ${request.message ?? null}, ${request.status}, ${iso(request.createdAt)}::timestamptz,
          ${iso(request.updatedAt)}::timestamptz)
        ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, message = EXCLUDED.message, updated_at = EXCLUDED.updated_at`)
      return request
    })

    const listRequests = (scope: Roles.PackageScope) =>
      Effect.orDie(sql<RequestRow>`
        SELECT * FROM access_requests
        WHERE organization = ${scope.organization} AND environment = ${scope.environment} AND package = ${scope.package}
        ORDER BY id`).pipe(Effect.map((rows) => rows.map(requestFromRow)), Effect.withSpan("SqlPermissionRepo.listRequests"))

    return PermissionRepo.PermissionRepo.of({ listGrants, listAt, listAtAny, upsert, remove, insertRequest, listRequests })
  })
)
