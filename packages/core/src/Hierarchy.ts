/**
 * The records of the resource hierarchy that the specification leaves unshown:
 * organizations with their environments, workspaces, documents and groups;
 * packages; users and their API keys. Minimal on purpose: the fields the
 * specified operations and the MCP server need, nothing speculative.
 */
import { Schema } from "effect"
import * as Naming from "./Naming.ts"

const optional = Schema.optionalKey
const Time = Schema.DateTimeUtcFromString

/** An organization: the top of the hierarchy, addressed by its subdomain. */
export const Organization = Schema.Struct({
  name: Naming.Identifier,
  displayName: optional(Schema.String),
  createdAt: Time
}).annotate({ identifier: "Organization" })
/** An organization. */
export type Organization = typeof Organization.Type

/** An environment (the MCP server's "project"): holds packages and connections. */
export const Environment = Schema.Struct({
  organization: Schema.String,
  name: Naming.Identifier,
  description: optional(Schema.String),
  createdAt: Time
}).annotate({ identifier: "Environment" })
/** An environment. */
export type Environment = typeof Environment.Type

/** A package: a named, versioned Malloy package in an environment. */
export const Package = Schema.Struct({
  organization: Schema.String,
  environment: Schema.String,
  name: Naming.Identifier,
  description: optional(Schema.String),
  /** The auto-promote policy: a version published while enabled is armed. */
  autoPromote: Schema.Boolean,
  /** Time-to-live of a demoted version before it is archived; null keeps them. */
  archiveDemotedAfterSeconds: Schema.NullOr(Schema.Int),
  /** The package's latest version; null before the first promotion. */
  latestVersionId: Schema.NullOr(Schema.String),
  createdAt: Time,
  updatedAt: Time,
  revision: Schema.Int
}).annotate({ identifier: "Package" })
/** A package. */
export type Package = typeof Package.Type

/** A workspace: a set of packages (granted to it) and documents. */
export const Workspace = Schema.Struct({
  organization: Schema.String,
  name: Naming.Identifier,
  createdAt: Time
}).annotate({ identifier: "Workspace" })
/** A workspace. */
export type Workspace = typeof Workspace.Type

/** A document in a workspace. */
export const Document = Schema.Struct({
  organization: Schema.String,
  workspace: Schema.String,
  name: Schema.String,
  createdAt: Time
}).annotate({ identifier: "Document" })
/** A document. */
export type Document = typeof Document.Type

/** A group of users in an organization. */
export const Group = Schema.Struct({
  organization: Schema.String,
  name: Schema.String.check(Schema.isPattern(/^[a-zA-Z0-9._-]+$/)),
  members: Schema.Array(Schema.String),
  createdAt: Time
}).annotate({ identifier: "Group" })
/** A group. */
export type Group = typeof Group.Type

/** A user, identified by a stable id and an e-mail address. */
export const User = Schema.Struct({
  id: Schema.String.check(Schema.isPattern(/^[a-zA-Z0-9_.-]+$/)),
  email: Schema.String,
  displayName: optional(Schema.String),
  createdAt: Time
}).annotate({ identifier: "User" })
/** A user. */
export type User = typeof User.Type

/** An API key of a user for the MCP server; only a hash of the key is stored. */
export const ApiKey = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  /** SHA-256 of the whole key; the key itself is shown once, at creation. */
  hash: Schema.String,
  createdAt: Time,
  revokedAt: Schema.NullOr(Time),
  lastUsedAt: Schema.NullOr(Time)
}).annotate({ identifier: "ApiKey" })
/** An API key record. */
export type ApiKey = typeof ApiKey.Type
