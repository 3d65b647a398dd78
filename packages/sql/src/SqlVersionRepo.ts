/**
 * VersionRepo on PostgreSQL. The record's facts are one JSON document; the key,
 * `promote_when_ready`, `is_latest` and `revision` are columns, so the partial
 * unique indexes hold "one armed, one latest per package" even against writers
 * that bypass this code.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Errors, PackageVersion, VersionRepo } from "@modelgate/core"
import { conflictOnUnique, iso, json } from "./internal/rows.ts"

type Record = PackageVersion.VersionRecord
type Ref = PackageVersion.VersionRef

const decode = Schema.decodeUnknownSync(PackageVersion.VersionRecord)
const encode = Schema.encodeSync(PackageVersion.VersionRecord)

interface Row {
  readonly record: unknown
  readonly revision: number
}

const fromRow = (row: Row): Record => ({ ...decode(json(row.record)), revision: row.revision })

const armedConflict = (r: { readonly organization: string; readonly environment: string; readonly package: string }) =>
  `Package ${r.organization}/${r.environment}/${r.package} already has a version armed for auto-promote`

/** VersionRepo over SqlClient. */
export const layer = Layer.effect(
  VersionRepo.VersionRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient

    const insert = Effect.fn("SqlVersionRepo.insert")(function*(record: Record) {
      const rows = yield* sql<Row>`
        INSERT INTO package_versions (organization, environment, package, id, record, promote_when_ready, created_at, revision)
        VALUES (${record.organization}, ${record.environment}, ${record.package}, ${record.id},
          ${JSON.stringify(encode({ ...record, revision: 0 }))}::jsonb, ${record.promoteWhenReady},
          ${iso(record.createdAt)}::timestamptz, 0)
        RETURNING record, revision`.pipe(
        conflictOnUnique((constraint) =>
          constraint.includes("one_armed")
            ? armedConflict(record)
            : `Version ${record.id} already exists in package ${record.organization}/${record.environment}/${record.package}`
        )
      )
      const row = rows[0]
      if (row === undefined) return yield* Effect.die(new Error("INSERT returned no row"))
      return fromRow(row)
    })

    const get = Effect.fn("SqlVersionRepo.get")(function*(ref: Ref) {
      const rows = yield* Effect.orDie(sql<Row>`
        SELECT record, revision FROM package_versions
        WHERE organization = ${ref.organization} AND environment = ${ref.environment} AND package = ${ref.package} AND id = ${ref.version}`)
      const row = rows[0]
      if (row === undefined) {
        return yield* new Errors.ResourceNotFound({
          message: `Version ${ref.version} not found in package ${ref.organization}/${ref.environment}/${ref.package}`
        })
      }
      return fromRow(row)
    })

    const list = Effect.fn("SqlVersionRepo.list")(function*(pkg: VersionRepo.PackageRef) {
      const rows = yield* Effect.orDie(sql<Row>`
        SELECT record, revision FROM package_versions
        WHERE organization = ${pkg.organization} AND environment = ${pkg.environment} AND package = ${pkg.package}
        ORDER BY created_at, id`)
      return rows.map(fromRow)
    })

    const save = Effect.fn("SqlVersionRepo.save")(function*(record: Record) {
      const rows = yield* sql<Row>`
        UPDATE package_versions SET
          record = ${JSON.stringify(encode(record))}::jsonb, promote_when_ready = ${record.promoteWhenReady}, revision = revision + 1
        WHERE organization = ${record.organization} AND environment = ${record.environment} AND package = ${record.package}
          AND id = ${record.id} AND revision = ${record.revision}
        RETURNING record, revision`.pipe(conflictOnUnique(armedConflict(record)))
      const row = rows[0]
      if (row !== undefined) return fromRow(row)
      yield* get(VersionRepo.refOf(record))
      return yield* new Errors.Conflict({
        message: `Version ${record.id} of ${record.organization}/${record.environment}/${record.package} was changed by another request; read it again and retry`
      })
    })

    return VersionRepo.VersionRepo.of({ insert, get, list, save })
  })
)
