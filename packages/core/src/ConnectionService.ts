/**
 * The connection operations of the admin API, over the ports: authorize, apply
 * the update rules, test the connection before anything is saved, move the
 * indexing state, save with optimistic concurrency, and answer with the read
 * view (never a secret). The HTTP adapter only decodes and renders.
 */
import { Context, DateTime, Effect, Layer } from "effect"
import { Access } from "./Access.ts"
import * as ConnectionModule from "./Connection.ts"
import { ConnectionRepo, type ConnectionRecord, type ConnectionRef, refOf } from "./ConnectionRepo.ts"
import { ConnectionTester } from "./ConnectionTester.ts"
import * as ConnectionUpdate from "./ConnectionUpdate.ts"
import { Conflict, type ConnectionTestFailed, type InsufficientPermissions, type ResourceNotFound, type ValidationError } from "./Errors.ts"
import * as Fingerprint from "./Fingerprint.ts"
import * as IndexingStatus from "./IndexingStatus.ts"
import { OrganizationRepo } from "./OrganizationRepo.ts"
import { Pipelines } from "./Pipelines.ts"
import type * as Roles from "./Roles.ts"
import { readView } from "./WriteOnly.ts"

/** The templates this server offers for `template` on create (none by default). */
export class ConnectionTemplates extends Context.Reference<ConnectionUpdate.Templates>("@modelgate/core/ConnectionTemplates", {
  defaultValue: () => ({})
}) {}

/** Any failure of a connection operation, each with its spec code. */
export type ConnectionServiceError =
  | ValidationError
  | ConnectionTestFailed
  | InsufficientPermissions
  | ResourceNotFound
  | Conflict

/** An environment's place in the hierarchy. */
export interface EnvironmentRef {
  readonly organization: string
  readonly environment: string
}

/** The resource path of a connection. */
export const resourceOf = (ref: ConnectionRef): string =>
  `organizations/${ref.organization}/environments/${ref.environment}/connections/${ref.name}`

/**
 * The Connection resource of a record: settings without secrets, the effective
 * fingerprint, the type's attributes and the indexing state. `detail` is the
 * single-connection read, the only one that carries `indexingProgress`.
 */
export const toResource = (record: ConnectionRecord, options: { readonly detail: boolean }): ConnectionModule.Connection => {
  const { fingerprint: _provided, ...settings } = readView(ConnectionModule.ConnectionSettings, record.settings)
  return {
    resource: resourceOf({ organization: record.organization, environment: record.environment, name: record.settings.name }),
    ...settings,
    fingerprint: Fingerprint.of(record.settings),
    attributes: ConnectionModule.attributesByType[record.settings.type],
    indexingStatus: record.indexingStatus,
    indexingStatusLastUpdated: record.indexingStatusLastUpdated,
    indexingProgress: options.detail
      ? IndexingStatus.progressForRead({
        indexingStatus: record.indexingStatus,
        indexingStatusLastUpdated: record.indexingStatusLastUpdated,
        indexingProgress: record.indexingProgress
      })
      : null
  }
}

/** Connection operations. */
export class ConnectionService extends Context.Service<ConnectionService, {
  readonly create: (actor: Roles.Actor, env: EnvironmentRef, input: ConnectionModule.ConnectionInput) => Effect.Effect<ConnectionModule.Connection, ConnectionServiceError>
  readonly update: (actor: Roles.Actor, ref: ConnectionRef, input: ConnectionModule.ConnectionInput) => Effect.Effect<ConnectionModule.Connection, ConnectionServiceError>
  readonly get: (actor: Roles.Actor, ref: ConnectionRef) => Effect.Effect<ConnectionModule.Connection, ConnectionServiceError>
  readonly list: (actor: Roles.Actor, env: EnvironmentRef) => Effect.Effect<ReadonlyArray<ConnectionModule.Connection>, ConnectionServiceError>
  readonly remove: (actor: Roles.Actor, ref: ConnectionRef) => Effect.Effect<void, ConnectionServiceError>
}>()("@modelgate/core/ConnectionService") {
  /** Connection operations over the ports. */
  static readonly layer = Layer.effect(
    ConnectionService,
    Effect.gen(function*() {
      const access = yield* Access
      const repo = yield* ConnectionRepo
      const tester = yield* ConnectionTester
      const organizations = yield* OrganizationRepo
      // Read once, where the layer is built: the server's configuration, not the request's.
      const templates = yield* ConnectionTemplates
      const pipelines = yield* Pipelines

      const envScope = (env: EnvironmentRef) => ({ _tag: "Environment" as const, organization: env.organization, environment: env.environment })
      const what = (ref: ConnectionRef) => `Connection ${ref.name} in ${ref.organization}/${ref.environment}`
      const requireEnvironment = (env: EnvironmentRef) => organizations.getEnvironment(env.organization, env.environment)

      const create = Effect.fn("ConnectionService.create")(function*(actor: Roles.Actor, env: EnvironmentRef, input: ConnectionModule.ConnectionInput) {
        yield* access.authorize(actor, "connection.create", envScope(env), `Environment ${env.organization}/${env.environment}`)
        yield* requireEnvironment(env)
        const settings = yield* ConnectionUpdate.create(input, templates)
        // Tested before anything is saved: a connection that cannot connect is not stored.
        yield* tester.test(settings)
        const now = yield* DateTime.now
        const record = yield* repo.insert({
          organization: env.organization,
          environment: env.environment,
          settings,
          ...IndexingStatus.create(now),
          createdAt: now,
          updatedAt: now,
          revision: 0
        })
        // Indexing is queued on creation and starts automatically.
        yield* pipelines.connectionChanged(refOf(record))
        return toResource(record, { detail: true })
      })

      // One attempt: read, replace, test, move the indexing state, save at the revision read.
      // The test (a round trip to the warehouse) runs once, again only when a concurrent update
      // changed what this replacement yields: a running indexing job saves its progress far more
      // often than a test takes, so a test inside every attempt would never win the race.
      const attemptUpdate = (ref: ConnectionRef, input: ConnectionModule.ConnectionInput, tested: { settings?: string }) =>
        Effect.gen(function*() {
          const stored = yield* repo.get(ref)
          const settings = yield* ConnectionUpdate.update(stored.settings, input)
          const key = JSON.stringify(settings)
          if (tested.settings !== key) {
            yield* tester.test(settings)
            tested.settings = key
          }
          const now = yield* DateTime.now
          const indexing = yield* Effect.fromResult(IndexingStatus.transition({
            indexingStatus: stored.indexingStatus,
            indexingStatusLastUpdated: stored.indexingStatusLastUpdated,
            indexingProgress: stored.indexingProgress
          }, { _tag: "updated" }, now))
          return yield* repo.save({ ...stored, settings, ...indexing, updatedAt: now })
        })

      const update = Effect.fn("ConnectionService.update")(function*(actor: Roles.Actor, ref: ConnectionRef, input: ConnectionModule.ConnectionInput) {
        yield* access.authorize(actor, "connection.update", envScope(ref), what(ref))
        // A concurrent writer (another update, an indexing job) saved first: the
        // replacement is recomputed on the fresh state, a few times at most.
        const tested: { settings?: string } = {}
        const saved = yield* Effect.suspend(() => attemptUpdate(ref, input, tested)).pipe(
          Effect.retry({ while: (e) => e._tag === "Conflict", times: 10 })
        )
        // Queued again (UNKNOWN), or RETRY for the running job: the job of this connection sorts it out.
        yield* pipelines.connectionChanged(ref)
        return toResource(saved, { detail: true })
      })

      const get = Effect.fn("ConnectionService.get")(function*(actor: Roles.Actor, ref: ConnectionRef) {
        yield* access.authorize(actor, "connection.read", envScope(ref), what(ref))
        return toResource(yield* repo.get(ref), { detail: true })
      })

      const list = Effect.fn("ConnectionService.list")(function*(actor: Roles.Actor, env: EnvironmentRef) {
        yield* access.authorize(actor, "connection.list", envScope(env), `Environment ${env.organization}/${env.environment}`)
        yield* requireEnvironment(env)
        return (yield* repo.list(env)).map((r) => toResource(r, { detail: false }))
      })

      const remove = Effect.fn("ConnectionService.remove")(function*(actor: Roles.Actor, ref: ConnectionRef) {
        yield* access.authorize(actor, "connection.delete", envScope(ref), what(ref))
        yield* repo.remove(ref)
      })

      return ConnectionService.of({
        create,
        update: (actor, ref, input) => update(actor, ref, input).pipe(Effect.catchTag("IllegalTransition", toConflict)),
        get,
        list,
        remove
      })
    })
  )
}

const toConflict = (error: { readonly message: string }) => Effect.fail(new Conflict({ message: error.message }))
