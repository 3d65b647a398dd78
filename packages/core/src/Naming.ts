/**
 * The naming rules of the specification: identifiers in paths, version ids,
 * table-name patterns, attached-database names and the `userGroupId` forms.
 * Each rule is a Schema, so the same rule validates API input and storage.
 */
import { Schema } from "effect"

/** `^[a-zA-Z0-9_ -]+$`: organization, environment, connection and package names, and permission workspaces. */
export const identifierRegExp = /^[a-zA-Z0-9_ -]+$/

/** IdentifierPattern as a Schema. */
export const Identifier = Schema.String.check(
  Schema.isPattern(identifierRegExp, { expected: "a name of letters, digits, '_', '-' and spaces" })
).annotate({ identifier: "IdentifierPattern" })

/** `^[a-zA-Z0-9_.-]+$`: the `versionId` path parameter. */
export const versionIdPathRegExp = /^[a-zA-Z0-9_.-]+$/

/** The `versionId` path parameter. */
export const VersionIdPath = Schema.String.check(
  Schema.isPattern(versionIdPathRegExp, { expected: "a version id of letters, digits, '_', '.' and '-'" })
).annotate({ identifier: "VersionIdPath" })

// Semantic Versioning 2.0.0: numeric parts without leading zeros; numeric
// prerelease identifiers without leading zeros; build identifiers are free-form.
const numeric = "0|[1-9]\\d*"
const prereleaseId = `(?:${numeric}|\\d*[a-zA-Z-][0-9a-zA-Z-]*)`
const buildId = "[0-9a-zA-Z-]+"

/** MAJOR.MINOR.PATCH[-prerelease][+build], as in Semantic Versioning 2.0.0. */
export const semanticVersionRegExp = new RegExp(
  `^(${numeric})\\.(${numeric})\\.(${numeric})` +
    `(?:-(${prereleaseId}(?:\\.${prereleaseId})*))?` +
    `(?:\\+(${buildId}(?:\\.${buildId})*))?$`
)

/** The version body field `id`: a semantic version. */
export const SemanticVersion = Schema.String.check(
  Schema.isPattern(semanticVersionRegExp, { expected: "a semantic version such as 1.2.3, 1.2.3-rc.1 or 1.2.3+build.7" })
).annotate({ identifier: "SemanticVersion" })

const segment = "[a-zA-Z0-9_-]+"

/** `{schema}.{table}`, `{schema}.*`, `{catalog}.{schema}.{table}`, `{catalog}.{schema}.*`; `*` only last. */
export const tableNamePatternRegExp = new RegExp(`^${segment}(?:\\.${segment})?\\.(?:${segment}|\\*)$`)

/** TableNamePattern as a Schema. */
export const TableNamePattern = Schema.String.check(
  Schema.isPattern(tableNamePatternRegExp, {
    expected: "schema.table, schema.*, catalog.schema.table or catalog.schema.* ('*' only as the last segment)"
  })
).annotate({ identifier: "TableNamePattern" })

/** `^[a-zA-Z_][a-zA-Z0-9_]*$`: the name of a database attached to a DuckDB connection. */
export const attachedDatabaseNameRegExp = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** AttachedDatabase name as a Schema. */
export const AttachedDatabaseName = Schema.String.check(
  Schema.isPattern(attachedDatabaseNameRegExp, { expected: "a name starting with a letter or '_', then letters, digits or '_'" })
).annotate({ identifier: "AttachedDatabaseName" })

// The e-mail shape: one '@', a non-empty local part, a dotted domain of DNS labels.
const emailRegExp = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/
// A user id has no '@' (that would be an address); see docs/decisions.md.
const userIdRegExp = /^[a-zA-Z0-9_.-]+$/
const groupNameRegExp = /^[a-zA-Z0-9._-]+$/

/** `user:<EMAIL>`, `user:<user_id>` or `group:<group_name>`. */
export const userGroupIdRegExp = new RegExp(
  `^(?:user:(?:${emailRegExp.source.slice(1, -1)}|${userIdRegExp.source.slice(1, -1)})|group:${groupNameRegExp.source.slice(1, -1)})$`
)

/** userGroupId as a Schema. */
export const UserGroupId = Schema.String.check(
  Schema.isPattern(userGroupIdRegExp, { expected: "user:<email>, user:<user_id> or group:<group_name>" })
).annotate({ identifier: "UserGroupId" })

/** A parsed userGroupId. */
export type Principal =
  | { readonly _tag: "UserEmail"; readonly email: string }
  | { readonly _tag: "UserId"; readonly id: string }
  | { readonly _tag: "Group"; readonly name: string }

/** Parses a userGroupId into the principal it names; `undefined` when it matches no form. */
export const parseUserGroupId = (value: string): Principal | undefined => {
  if (value.startsWith("user:")) {
    const rest = value.slice("user:".length)
    if (rest.includes("@")) return emailRegExp.test(rest) ? { _tag: "UserEmail", email: rest.toLowerCase() } : undefined
    return userIdRegExp.test(rest) ? { _tag: "UserId", id: rest } : undefined
  }
  if (value.startsWith("group:")) {
    const rest = value.slice("group:".length)
    return groupNameRegExp.test(rest) ? { _tag: "Group", name: rest } : undefined
  }
  return undefined
}

/** Formats a principal as its userGroupId. */
export const formatUserGroupId = (principal: Principal): string => {
  switch (principal._tag) {
    case "UserEmail":
      return `user:${principal.email}`
    case "UserId":
      return `user:${principal.id}`
    case "Group":
      return `group:${principal.name}`
  }
}
