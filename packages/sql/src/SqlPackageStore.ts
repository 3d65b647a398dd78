/**
 * PackageStore on PostgreSQL: each file of a published version is a row, so
 * every instance behind a load balancer serves the same files. A version's files
 * are written in one transaction.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, PackageStore } from "@modelgate/core"

/** PackageStore over SqlClient. */
export const layer = Layer.effect(
  PackageStore.PackageStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    return PackageStore.PackageStore.of({
      put: (location, files) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM package_files WHERE location = ${location}`
          for (const [path, content] of files) {
            yield* sql`INSERT INTO package_files (location, path, content) VALUES (${location}, ${path}, ${content})`
          }
        })).pipe(Effect.orDie, Effect.withSpan("SqlPackageStore.put")),
      // One file per query, so one message never carries more than one file.
      get: (location) =>
        Effect.gen(function*() {
          const paths = yield* sql<{ readonly path: string }>`SELECT path FROM package_files WHERE location = ${location} ORDER BY path`
          if (paths.length === 0) return yield* new Errors.ResourceNotFound({ message: `Package files at ${location} not found` })
          const files = new Map<string, Uint8Array>()
          for (const { path } of paths) {
            const rows = yield* sql<{ readonly content: Uint8Array }>`
              SELECT content FROM package_files WHERE location = ${location} AND path = ${path}`
            const content = rows[0]?.content
            if (content !== undefined) files.set(path, new Uint8Array(content))
          }
          return files as ReadonlyMap<string, Uint8Array>
        }).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e)), Effect.withSpan("SqlPackageStore.get"))
    })
  })
)
