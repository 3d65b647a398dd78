/**
 * The typed admin client (`AdminClient.make`, derived from the `AdminApi` definition) against the
 * running example server: connections, packages, publishing a .tar.gz, versions, permissions and
 * API keys, with failures decoded into the API's `{ code, message }` error classes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { resolve } from "node:path"
import { AdminClient, AdminErrors, PackageFiles } from "@modelgate/http"
import { start } from "./TestServer.ts"

const demoPackages = resolve(import.meta.dirname, "../demo/packages")

const seed = {
  auth: { issuer: "modelgate-e2e", audience: "modelgate" },
  users: [{ id: "root", email: "root@acme.test" }, { id: "ada", email: "ada@acme.test" }],
  organizations: [{
    name: "acme",
    grants: [{ userGroupId: "user:root", permission: "admin" }],
    environments: [{
      name: "prod",
      grants: [{ userGroupId: "user:ada", permission: "viewer" }],
      connections: [{ name: "warehouse", type: "duckdb" }],
      packages: [{ name: "shop", versions: [{ id: "1.0.0", path: `${demoPackages}/ecommerce`, latest: true }] }]
    }]
  }]
}

const prod = { organizationName: "acme", environmentName: "prod" }

describe("typed admin client against the example server", () => {
  it.live("connections, packages, publish, versions, permissions and API keys; typed { code, message } errors", () =>
    Effect.gen(function*() {
      const server = yield* start(seed, { backend: "pglite" })
      const root = yield* AdminClient.make({ baseUrl: server.url, token: yield* Effect.promise(() => server.token("root")) })

      // Connections: list, create, update; a second create of the same name is a typed 409.
      const listed = yield* root.connections.list({ params: prod })
      assert.deepStrictEqual(listed.map((c) => c.name), ["warehouse"])
      const created = yield* root.connections.create({ params: prod, payload: { name: "lake", type: "duckdb" } })
      assert.strictEqual(created.name, "lake")
      const updated = yield* root.connections.update({
        params: { ...prod, connectionName: "lake" },
        payload: { type: "duckdb", excludeAllTables: true }
      })
      assert.strictEqual(updated.excludeAllTables, true)
      const duplicate = yield* root.connections.create({ params: prod, payload: { name: "lake", type: "duckdb" } }).pipe(Effect.flip)
      assert.instanceOf(duplicate, AdminErrors.ConflictError)
      if (duplicate instanceof AdminErrors.ConflictError) assert.strictEqual(duplicate.code, "CONFLICT")

      // Packages and a .tar.gz publish through the client's application/gzip body.
      yield* root.packages.create({ params: prod, payload: { name: "flights" } })
      const archive = PackageFiles.toTarGz(yield* PackageFiles.fromDirectory(`${demoPackages}/flights`))
      const published = yield* root.versions.publish({ params: { ...prod, packageName: "flights" }, query: { id: "0.1.0" }, payload: archive })
      assert.strictEqual(published.id, "0.1.0")
      const notTar = yield* root.versions.publish({ params: { ...prod, packageName: "flights" }, query: { id: "0.2.0" }, payload: new Uint8Array([1, 2, 3]) }).pipe(Effect.flip)
      assert.instanceOf(notTar, AdminErrors.BadRequest)
      if (notTar instanceof AdminErrors.BadRequest) assert.strictEqual(notTar.code, "VALIDATION_ERROR")

      // Versions: list, archive, and a typed 404 for a version that does not exist.
      const versions = yield* root.versions.list({ params: { ...prod, packageName: "flights" } })
      assert.deepStrictEqual(versions.map((v) => v.id), ["0.1.0"])
      const archived = yield* root.versions.update({ params: { ...prod, packageName: "flights", versionId: "0.1.0" }, payload: { archiveStatus: "archive" } })
      assert.strictEqual(archived.archiveStatus, "archive")
      const missing = yield* root.versions.get({ params: { ...prod, packageName: "flights", versionId: "9.9.9" } }).pipe(Effect.flip)
      assert.instanceOf(missing, AdminErrors.NotFound)
      if (missing instanceof AdminErrors.NotFound) assert.strictEqual(missing.code, "RESOURCE_NOT_FOUND")

      // Permissions: a grant, then the list.
      const grant = yield* root.permissions.create({
        params: { ...prod, packageName: "shop" },
        query: {},
        payload: { userGroupId: "user:ada", permission: "modeler" }
      })
      assert.strictEqual(grant.permission, "modeler")
      const grants = yield* root.permissions.list({ params: { ...prod, packageName: "shop" } })
      assert.include(grants.map((g) => g.userGroupId), "user:ada")

      // API keys: created (shown once), listed without the secret, revoked.
      const key = yield* root.apiKeys.create({ payload: { name: "laptop" } })
      assert.match(key.key, /^mg_/)
      const keys = yield* root.apiKeys.list()
      assert.deepStrictEqual(keys.filter((k) => k.id === key.id).map((k) => k.name), ["laptop"])
      assert.notProperty(keys.find((k) => k.id === key.id), "key")
      const revoked = yield* root.apiKeys.revoke({ params: { keyId: key.id } })
      assert.isNotNull(revoked.revokedAt)

      // The spec's base URL (with /api/v0) works as well; a viewer is refused a write with 403.
      const ada = yield* AdminClient.make({ baseUrl: `${server.url}/api/v0/`, token: yield* Effect.promise(() => server.token("ada")) })
      assert.strictEqual((yield* ada.connections.get({ params: { ...prod, connectionName: "warehouse" } })).name, "warehouse")
      const forbidden = yield* ada.connections.remove({ params: { ...prod, connectionName: "warehouse" } }).pipe(Effect.flip)
      assert.instanceOf(forbidden, AdminErrors.Forbidden)
      if (forbidden instanceof AdminErrors.Forbidden) assert.strictEqual(forbidden.code, "INSUFFICIENT_PERMISSIONS")

      // No token: 401 AUTHENTICATION_REQUIRED as a typed error.
      const anonymous = yield* AdminClient.make({ baseUrl: server.url })
      const unauthorized = yield* anonymous.connections.list({ params: prod }).pipe(Effect.flip)
      assert.instanceOf(unauthorized, AdminErrors.Unauthorized)
      if (unauthorized instanceof AdminErrors.Unauthorized) assert.strictEqual(unauthorized.code, "AUTHENTICATION_REQUIRED")
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.scoped), 120_000)
})
