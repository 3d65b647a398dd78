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
      get: (location) =>
        Effect.orDie(sql<{ readonly path: string; readonly content: Uint8Array }>`
          SELECT path, content FROM package_files WHERE location = ${location} ORDER BY path`).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.fail(new Errors.ResourceNotFound({ message: `Package files at ${location} not found` }))
              : Effect.succeed(new Map(rows.map((r) => [r.path, new Uint8Array(r.content)] as const)))
          ),
          Effect.withSpan("SqlPackageStore.get")
        )
    })
  })
)
