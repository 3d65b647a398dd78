/**
 * PackageRepo on PostgreSQL. The latest-version pointer is the `is_latest` flag
 * of one version row (a partial unique index keeps it to one per package), so
 * saving a package moves the flag in the same transaction as the package row.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, type Hierarchy, PackageRepo, type VersionRepo } from "@modelgate/core"
import { conflictOnUnique, iso, time } from "./internal/rows.ts"

type Package = Hierarchy.Package

interface Row {
  readonly organization: string
  readonly environment: string
  readonly name: string
  readonly description: string | null
  readonly auto_promote: boolean
  readonly archive_demoted_after_seconds: number | null
  readonly latest_version_id: string | null
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly revision: number
}

const fromRow = (row: Row): Package => ({
  organization: row.organization,
  environment: row.environment,
  name: row.name,
  ...(row.description === null ? {} : { description: row.description }),
  autoPromote: row.auto_promote,
  archiveDemotedAfterSeconds: row.archive_demoted_after_seconds,
  latestVersionId: row.latest_version_id,
  createdAt: time(row.created_at),
  updatedAt: time(row.updated_at),
  revision: row.revision
})

/** PackageRepo over SqlClient. */
export const layer = Layer.effect(
  PackageRepo.PackageRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient

    const select = (where: ReturnType<typeof sql.and>) => sql<Row>`
      SELECT p.*, (SELECT v.id FROM package_versions v
                   WHERE v.organization = p.organization AND v.environment = p.environment AND v.package = p.name AND v.is_latest
                  ) AS latest_version_id
      FROM packages p WHERE ${where} ORDER BY p.name`

    const notFound = (ref: VersionRepo.PackageRef) =>
      new Errors.ResourceNotFound({ message: `Package ${ref.package} not found in ${ref.organization}/${ref.environment}` })

    const get = Effect.fn("SqlPackageRepo.get")(function*(ref: VersionRepo.PackageRef) {
      const rows = yield* Effect.orDie(
        select(sql.and([sql`p.organization = ${ref.organization}`, sql`p.environment = ${ref.environment}`, sql`p.name = ${ref.package}`]))
      )
      const row = rows[0]
      if (row === undefined) return yield* notFound(ref)
      return fromRow(row)
    })

    const insert = Effect.fn("SqlPackageRepo.insert")(function*(pkg: Package) {
      yield* sql`
        INSERT INTO packages (organization, environment, name, description, auto_promote, archive_demoted_after_seconds,
          created_at, updated_at, revision)
        VALUES (${pkg.organization}, ${pkg.environment}, ${pkg.name}, ${pkg.description ?? null}, ${pkg.autoPromote},
          ${pkg.archiveDemotedAfterSeconds}, ${iso(pkg.createdAt)}::timestamptz, ${iso(pkg.updatedAt)}::timestamptz, 0)`.pipe(
        conflictOnUnique(`Package ${pkg.name} already exists in ${pkg.organization}/${pkg.environment}`)
      )
      return { ...pkg, latestVersionId: null, revision: 0 }
    })

    const list = Effect.fn("SqlPackageRepo.list")(function*(env: { readonly organization: string; readonly environment: string }) {
      const rows = yield* Effect.orDie(select(sql.and([sql`p.organization = ${env.organization}`, sql`p.environment = ${env.environment}`])))
      return rows.map(fromRow)
    })

    const save = Effect.fn("SqlPackageRepo.save")(function*(pkg: Package) {
      const ref = PackageRepo.refOf(pkg)
      return yield* sql.withTransaction(Effect.gen(function*() {
        const updated = yield* sql`
          UPDATE packages SET description = ${pkg.description ?? null}, auto_promote = ${pkg.autoPromote},
            archive_demoted_after_seconds = ${pkg.archiveDemotedAfterSeconds}, updated_at = ${iso(pkg.updatedAt)}::timestamptz,
            revision = revision + 1
          WHERE organization = ${pkg.organization} AND environment = ${pkg.environment} AND name = ${pkg.name}
            AND revision = ${pkg.revision}
          RETURNING name`
        if (updated.length === 0) {
          yield* get(ref)
          return yield* new Errors.Conflict({
            message: `Package ${pkg.organization}/${pkg.environment}/${pkg.name} was changed by another request; read it again and retry`
          })
        }
        // Move the latest flag: clear it everywhere else first, so the partial unique index never sees two.
        yield* sql`
          UPDATE package_versions SET is_latest = false
          WHERE organization = ${pkg.organization} AND environment = ${pkg.environment} AND package = ${pkg.name}
            AND is_latest AND id IS DISTINCT FROM ${pkg.latestVersionId}`
        if (pkg.latestVersionId !== null) {
          const flagged = yield* sql`
            UPDATE package_versions SET is_latest = true
            WHERE organization = ${pkg.organization} AND environment = ${pkg.environment} AND package = ${pkg.name}
              AND id = ${pkg.latestVersionId}
            RETURNING id`
          if (flagged.length === 0) {
            return yield* new Errors.ResourceNotFound({ message: `Version ${pkg.latestVersionId} not found in package ${pkg.name}` })
          }
        }
        return yield* get(ref)
      })).pipe(Effect.catchTag("SqlError", (error) => Effect.die(error)))
    })

    return PackageRepo.PackageRepo.of({ insert, get, list, save })
  })
)
