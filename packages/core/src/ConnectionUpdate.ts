/**
 * Creating and updating a connection as pure functions. An update is a full
 * replacement: every field is what was sent and an omitted optional field is
 * cleared; only a blank write-only secret keeps its stored value (a key's
 * passphrase only together with its key). Read-only fields may be sent back
 * from a read and are ignored. The result is validated and normalized.
 */
import { Effect, Schema } from "effect"
import type { ConnectionInput, ConnectionTemplate } from "./Connection.ts"
import { ConnectionSettings } from "./Connection.ts"
import * as ConnectionRules from "./ConnectionRules.ts"
import { ValidationError } from "./Errors.ts"
import * as Fingerprint from "./Fingerprint.ts"
import { mergeSecrets } from "./WriteOnly.ts"

/** What a template fills in: everything but the name. */
export type TemplateSettings = Omit<ConnectionSettings, "name">

/** The templates this server offers, with their full settings (credentials included). */
export type Templates = Partial<Record<ConnectionTemplate, TemplateSettings>>

const decodeSettings = Schema.decodeUnknownEffect(ConnectionSettings)

// The caller-controlled part of a request body: server-owned and write-only
// request fields (resource, attributes, indexing state, template) are dropped.
const settingsOf = (input: ConnectionInput, name: string) => {
  const {
    resource: _resource,
    attributes: _attributes,
    template: _template,
    indexingStatus: _status,
    indexingStatusLastUpdated: _updated,
    indexingProgress: _progress,
    excludeAllTables,
    ...rest
  } = input
  return { ...rest, name, ...(excludeAllTables === undefined ? {} : { excludeAllTables }) }
}

const decode = (value: unknown) =>
  decodeSettings(value).pipe(
    Effect.mapError((error) => new ValidationError({ message: `Invalid connection: ${error.message}` }))
  )

/**
 * A new connection from a create request. With `template`, the template's type,
 * configuration and credentials are used, every other request field but `name`
 * is ignored, and the name defaults to the template's name.
 */
export const create = Effect.fnUntraced(function*(input: ConnectionInput, templates: Templates = {}) {
  if (input.template !== undefined) {
    const template = templates[input.template]
    if (template === undefined) {
      return yield* new ValidationError({ message: `Template ${input.template} is not available on this server` })
    }
    const settings = yield* decode({ ...template, name: input.name ?? input.template })
    return yield* ConnectionRules.validate(settings)
  }
  if (input.name === undefined) return yield* new ValidationError({ message: "Invalid connection: name is required" })
  if (input.type === undefined) return yield* new ValidationError({ message: "Invalid connection: type is required" })
  const settings = yield* decode(settingsOf(input, input.name))
  // A new connection has nothing stored: blank secrets are simply absent.
  return yield* ConnectionRules.validate(mergeSecrets(ConnectionSettings, undefined, settings))
})

/**
 * The connection after an update request: full replacement of `stored` by `input`,
 * blank secrets kept from `stored`, then validated. `template` is create-only, and
 * the name cannot change (a connection is addressed by its name).
 */
export const update = Effect.fnUntraced(function*(stored: ConnectionSettings, input: ConnectionInput) {
  if (input.template !== undefined) {
    return yield* new ValidationError({ message: "Invalid connection: template can only be given when creating a connection" })
  }
  if (input.name !== undefined && input.name !== stored.name) {
    return yield* new ValidationError({
      message: `Invalid connection: name ${JSON.stringify(input.name)} does not match the connection ${JSON.stringify(stored.name)}; connections cannot be renamed`
    })
  }
  if (input.type === undefined) return yield* new ValidationError({ message: "Invalid connection: type is required" })
  const submitted = yield* decode(settingsOf(input, stored.name))
  const merged = mergeSecrets(ConnectionSettings, stored, submitted)
  return yield* ConnectionRules.validate(withFingerprint(stored, merged))
})

/**
 * The fingerprint rule on update. A provided fingerprint is used verbatim; but a
 * read returns the derived fingerprint, so sending a read back must not pin it:
 * a submitted value equal to the stored connection's derived fingerprint (when
 * none was provided before) is treated as not provided.
 */
const withFingerprint = (stored: ConnectionSettings, next: ConnectionSettings): ConnectionSettings => {
  if (next.fingerprint === undefined) return next
  if (stored.fingerprint === undefined && next.fingerprint === Fingerprint.derive(stored)) {
    const { fingerprint: _fingerprint, ...rest } = next
    return rest
  }
  return next
}
