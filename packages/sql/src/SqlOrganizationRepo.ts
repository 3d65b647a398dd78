/**
 * OrganizationRepo on PostgreSQL: organizations and what they directly hold
 * (environments, workspaces, documents, groups), one table each.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, type Hierarchy, OrganizationRepo } from "@modelgate/core"
import { conflictOnUnique, iso, json, time } from "./internal/rows.ts"

const decodeMembers = Schema.decodeUnknownSync(Schema.Array(Schema.String))

interface Named {
  readonly organization: string
  readonly name: string
  readonly created_at: unknown
}

/** OrganizationRepo over SqlClient. */
export const layer = Layer.effect(
  OrganizationRepo.OrganizationRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const notFound = (what: string) => new Errors.ResourceNotFound({ message: `${what} not found` })

    const organization = (row: { name: string; display_name: string | null; created_at: unknown }): Hierarchy.Organization => ({
      name: row.name,
      ...(row.display_name === null ? {} : { displayName: row.display_name }),
      createdAt: time(row.created_at)
    })
    const environment = (row: Named & { description: string | null }): Hierarchy.Environment => ({
      organization: row.organization,
      name: row.name,
      ...(row.description === null ? {} : { description: row.description }),
      createdAt: time(row.created_at)
    })
    const workspace = (row: Named): Hierarchy.Workspace => ({ organization: row.organization, name: row.name, createdAt: time(row.created_at) })
    const group = (row: Named & { members: unknown }): Hierarchy.Group => ({
      organization: row.organization,
      name: row.name,
      members: decodeMembers(json(row.members)),
      createdAt: time(row.created_at)
    })

    return OrganizationRepo.OrganizationRepo.of({
      insertOrganization: (org) =>
        sql`INSERT INTO organizations (name, display_name, created_at) VALUES (${org.name}, ${org.displayName ?? null}, ${iso(org.createdAt)}::timestamptz)`
          .pipe(conflictOnUnique(`Organization ${org.name} already exists`), Effect.as(org)),
      getOrganization: (name) =>
        Effect.orDie(sql<{ name: string; display_name: string | null; created_at: unknown }>`SELECT * FROM organizations WHERE name = ${name}`)
          .pipe(Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound(`Organization ${name}`)) : Effect.succeed(organization(rows[0])))),
      listOrganizations: Effect.orDie(sql<{ name: string; display_name: string | null; created_at: unknown }>`SELECT * FROM organizations ORDER BY name`)
        .pipe(Effect.map((rows) => rows.map(organization))),
      insertEnvironment: (env) =>
        sql`INSERT INTO environments (organization, name, description, created_at)
            VALUES (${env.organization}, ${env.name}, ${env.description ?? null}, ${iso(env.createdAt)}::timestamptz)`
          .pipe(conflictOnUnique(`Environment ${env.name} already exists in ${env.organization}`), Effect.as(env)),
      getEnvironment: (organization, name) =>
        Effect.orDie(sql<Named & { description: string | null }>`SELECT * FROM environments WHERE organization = ${organization} AND name = ${name}`)
          .pipe(Effect.flatMap((rows) =>
            rows[0] === undefined ? Effect.fail(notFound(`Environment ${organization}/${name}`)) : Effect.succeed(environment(rows[0]))
          )),
      listEnvironments: (organization) =>
        Effect.orDie(sql<Named & { description: string | null }>`SELECT * FROM environments WHERE organization = ${organization} ORDER BY name`)
          .pipe(Effect.map((rows) => rows.map(environment))),
      insertWorkspace: (ws) =>
        sql`INSERT INTO workspaces (organization, name, created_at) VALUES (${ws.organization}, ${ws.name}, ${iso(ws.createdAt)}::timestamptz)`
          .pipe(conflictOnUnique(`Workspace ${ws.name} already exists in ${ws.organization}`), Effect.as(ws)),
      getWorkspace: (organization, name) =>
        Effect.orDie(sql<Named>`SELECT * FROM workspaces WHERE organization = ${organization} AND name = ${name}`)
          .pipe(Effect.flatMap((rows) =>
            rows[0] === undefined ? Effect.fail(notFound(`Workspace ${organization}/${name}`)) : Effect.succeed(workspace(rows[0]))
          )),
      listWorkspaces: (organization) =>
        Effect.orDie(sql<Named>`SELECT * FROM workspaces WHERE organization = ${organization} ORDER BY name`)
          .pipe(Effect.map((rows) => rows.map(workspace))),
      insertDocument: (doc) =>
        sql`INSERT INTO documents (organization, workspace, name, created_at)
            VALUES (${doc.organization}, ${doc.workspace}, ${doc.name}, ${iso(doc.createdAt)}::timestamptz)`
          .pipe(conflictOnUnique(`Document ${doc.name} already exists in ${doc.organization}/${doc.workspace}`), Effect.as(doc)),
      listDocuments: (organization, ws) =>
        Effect.orDie(sql<Named & { workspace: string }>`
          SELECT * FROM documents WHERE organization = ${organization} AND workspace = ${ws} ORDER BY name`)
          .pipe(Effect.map((rows) => rows.map((row) => ({ organization: row.organization, workspace: row.workspace, name: row.name, createdAt: time(row.created_at) })))),
      putGroup: (g) =>
        Effect.orDie(sql`
          INSERT INTO groups (organization, name, members, created_at)
          VALUES (${g.organization}, ${g.name}, ${JSON.stringify(g.members)}::jsonb, ${iso(g.createdAt)}::timestamptz)
          ON CONFLICT (organization, name) DO UPDATE SET members = EXCLUDED.members`).pipe(Effect.as(g)),
      listGroups: (organization) =>
        Effect.orDie(sql<Named & { members: unknown }>`SELECT * FROM groups WHERE organization = ${organization} ORDER BY name`)
          .pipe(Effect.map((rows) => rows.map(group))),
      groupsOf: (organization, userId) =>
        Effect.orDie(sql<Named & { members: unknown }>`
          SELECT * FROM groups WHERE organization = ${organization} AND members @> ${JSON.stringify([userId])}::jsonb ORDER BY name`)
          .pipe(Effect.map((rows) => rows.map(group)))
    })
  })
)
