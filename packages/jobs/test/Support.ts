/**
 * Test support: storage on a fresh database (embedded PGlite, or a scratch
 * database on the PostgreSQL server), the core services, and fixtures.
 */
import { Access, Errors, OrganizationRepo, PackageService, PermissionRepo, Roles, SecretCipher } from "@modelgate/core"
import { Pglite, ScratchDatabase, Storage } from "@modelgate/sql"
import { DateTime, Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { createServer } from "node:net"

/**
 * A port for a runner to listen on: below Linux's ephemeral range (32768 and up),
 * so an outgoing connection of another test cannot hold it, and free on every
 * interface when picked (runners listen on 0.0.0.0).
 */
export const runnerPort: Effect.Effect<number> = Effect.promise(async () => {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000)
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once("error", () => resolve(false))
      server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
})

/** The PostgreSQL server of the integration tests (trust authentication). */
export const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A fresh scratch database on the server for this run, dropped on release. */
export const scratch = ScratchDatabase.make(serverUrl, "modelgate_jobs")

/** Storage (migrated, every repository) on a client, with a test cipher; the client stays visible. */
export const storageOn = <E>(client: Layer.Layer<SqlClient, E>) =>
  Storage.layer.pipe(Layer.provideMerge(SecretCipher.SecretCipher.layerMemory), Layer.provideMerge(client))

/** Storage on an in-memory PGlite. */
export const pgliteStorage = storageOn(Pglite.layer({ maxConnections: 6 }))

/** The package service over storage. */
export const packageService: Layer.Layer<
  PackageService.PackageService | Access.Access,
  never,
  Storage.Repositories
> = PackageService.PackageService.layer.pipe(Layer.provideMerge(Access.Access.layer))

/** A system actor: every permission. */
export const system: Roles.Actor = { userId: "system", groups: [], system: true }

/** Creates organization `acme`, environment `prod`. */
export const setupHierarchy: Effect.Effect<void, Errors.Conflict | Errors.ResourceNotFound, OrganizationRepo.OrganizationRepo | PermissionRepo.PermissionRepo> = Effect.gen(function*() {
  const orgs = yield* OrganizationRepo.OrganizationRepo
  const grants = yield* PermissionRepo.PermissionRepo
  const t0 = yield* DateTime.now
  yield* orgs.insertOrganization({ name: "acme", createdAt: t0 })
  yield* orgs.insertEnvironment({ organization: "acme", name: "prod", createdAt: t0 })
  yield* grants.upsert({ principal: "user:root", scope: Roles.organizationScope("acme"), role: "admin", createdAt: t0, updatedAt: t0 })
})

const text = (s: string) => new TextEncoder().encode(s)

/** The files of a minimal package; `manifest` is merged into publisher.json. */
export const packageFiles = (manifest: Readonly<Record<string, unknown>> = {}) =>
  new Map<string, Uint8Array>([
    ["publisher.json", text(JSON.stringify({ name: "sales", ...manifest }))],
    ["model.malloy", text("source: orders is duckdb.table('orders')")]
  ])

/** Redacted URL helper. */
export const redacted = (url: string) => Redacted.make(url)
