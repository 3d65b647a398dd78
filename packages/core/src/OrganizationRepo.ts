/**
 * The storage port of the organization aggregate: the organization and what it
 * directly holds (environments, workspaces with their documents, groups).
 */
import { Context, Effect, Layer } from "effect"
import type { Conflict, ResourceNotFound } from "./Errors.ts"
import type { Document, Environment, Group, Organization, Workspace } from "./Hierarchy.ts"
import * as MemoryTable from "./internal/MemoryTable.ts"

/** Storage of organizations and their environments, workspaces, documents and groups. */
export class OrganizationRepo extends Context.Service<OrganizationRepo, {
  readonly insertOrganization: (org: Organization) => Effect.Effect<Organization, Conflict>
  readonly getOrganization: (name: string) => Effect.Effect<Organization, ResourceNotFound>
  readonly listOrganizations: Effect.Effect<ReadonlyArray<Organization>>
  readonly insertEnvironment: (env: Environment) => Effect.Effect<Environment, Conflict>
  readonly getEnvironment: (organization: string, name: string) => Effect.Effect<Environment, ResourceNotFound>
  readonly listEnvironments: (organization: string) => Effect.Effect<ReadonlyArray<Environment>>
  readonly insertWorkspace: (workspace: Workspace) => Effect.Effect<Workspace, Conflict>
  readonly getWorkspace: (organization: string, name: string) => Effect.Effect<Workspace, ResourceNotFound>
  readonly listWorkspaces: (organization: string) => Effect.Effect<ReadonlyArray<Workspace>>
  readonly insertDocument: (document: Document) => Effect.Effect<Document, Conflict>
  readonly listDocuments: (organization: string, workspace: string) => Effect.Effect<ReadonlyArray<Document>>
  /** Creates or replaces a group (with its members). */
  readonly putGroup: (group: Group) => Effect.Effect<Group>
  /** Every group of an organization. */
  readonly listGroups: (organization: string) => Effect.Effect<ReadonlyArray<Group>>
  /** The groups of an organization that have `userId` as a member. */
  readonly groupsOf: (organization: string, userId: string) => Effect.Effect<ReadonlyArray<Group>>
}>()("@modelgate/core/OrganizationRepo") {
  /** An in-memory repository. */
  static readonly layerMemory = Layer.effect(
    OrganizationRepo,
    Effect.gen(function*() {
      const orgs = yield* MemoryTable.make<Organization>((o) => o.name, (k) => `Organization ${k}`)
      const envs = yield* MemoryTable.make<Environment>((e) => MemoryTable.keyOf(e.organization, e.name), (k) => `Environment ${k}`)
      const workspaces = yield* MemoryTable.make<Workspace>((w) => MemoryTable.keyOf(w.organization, w.name), (k) => `Workspace ${k}`)
      const documents = yield* MemoryTable.make<Document>(
        (d) => MemoryTable.keyOf(d.organization, d.workspace, d.name),
        (k) => `Document ${k}`
      )
      const groups = yield* MemoryTable.make<Group>((g) => MemoryTable.keyOf(g.organization, g.name), (k) => `Group ${k}`)
      return OrganizationRepo.of({
        insertOrganization: orgs.insert,
        getOrganization: orgs.get,
        listOrganizations: orgs.list(),
        insertEnvironment: envs.insert,
        getEnvironment: (organization, name) => envs.get(MemoryTable.keyOf(organization, name)),
        listEnvironments: (organization) => envs.list((e) => e.organization === organization),
        insertWorkspace: workspaces.insert,
        getWorkspace: (organization, name) => workspaces.get(MemoryTable.keyOf(organization, name)),
        listWorkspaces: (organization) => workspaces.list((w) => w.organization === organization),
        insertDocument: documents.insert,
        listDocuments: (organization, workspace) => documents.list((d) => d.organization === organization && d.workspace === workspace),
        putGroup: groups.upsert,
        listGroups: (organization) => groups.list((g) => g.organization === organization),
        groupsOf: (organization, userId) => groups.list((g) => g.organization === organization && g.members.includes(userId))
      })
    })
  )
}
