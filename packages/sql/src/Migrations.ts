/**
 * The database schema of modelgate as forward-only, numbered migrations. Each
 * runs once, in order, inside a transaction (effect's Migrator records them in
 * `modelgate_migrations`). Invariants live in the schema too: unique names per
 * parent, one armed and one latest version per package, revisions for
 * optimistic concurrency.
 */
import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"

const m0001 = Effect.gen(function*() {
  const sql = yield* SqlClient
  yield* sql`
    CREATE TABLE organizations (
      name text PRIMARY KEY,
      display_name text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE environments (
      organization text NOT NULL REFERENCES organizations (name) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization, name)
    )`
  yield* sql`
    CREATE TABLE workspaces (
      organization text NOT NULL REFERENCES organizations (name) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization, name)
    )`
  yield* sql`
    CREATE TABLE documents (
      organization text NOT NULL,
      workspace text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization, workspace, name),
      FOREIGN KEY (organization, workspace) REFERENCES workspaces (organization, name) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE groups (
      organization text NOT NULL REFERENCES organizations (name) ON DELETE CASCADE,
      name text NOT NULL,
      members jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization, name)
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      display_name text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_unique ON users (lower(email))`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`
  yield* sql`
    CREATE TABLE packages (
      organization text NOT NULL,
      environment text NOT NULL,
      name text NOT NULL,
      description text,
      auto_promote boolean NOT NULL,
      archive_demoted_after_seconds integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      revision integer NOT NULL,
      PRIMARY KEY (organization, environment, name),
      FOREIGN KEY (organization, environment) REFERENCES environments (organization, name) ON DELETE CASCADE
    )`
  // The version's facts are one JSON document (the encoded VersionRecord); the
  // columns beside it are what the invariants and lookups need.
  yield* sql`
    CREATE TABLE package_versions (
      organization text NOT NULL,
      environment text NOT NULL,
      package text NOT NULL,
      id text NOT NULL,
      record jsonb NOT NULL,
      promote_when_ready boolean NOT NULL,
      is_latest boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      revision integer NOT NULL,
      PRIMARY KEY (organization, environment, package, id),
      FOREIGN KEY (organization, environment, package) REFERENCES packages (organization, environment, name) ON DELETE CASCADE
    )`
  // At most one armed version and at most one latest version per package.
  yield* sql`
    CREATE UNIQUE INDEX package_versions_one_armed ON package_versions (organization, environment, package)
    WHERE promote_when_ready`
  yield* sql`
    CREATE UNIQUE INDEX package_versions_one_latest ON package_versions (organization, environment, package)
    WHERE is_latest`
  // Settings are JSON with every secret replaced by its sealed form;
  // secret_key_ids lists the keys those were sealed with (for start-up checks and re-encryption).
  yield* sql`
    CREATE TABLE connections (
      organization text NOT NULL,
      environment text NOT NULL,
      name text NOT NULL,
      type text NOT NULL,
      settings jsonb NOT NULL,
      secret_key_ids text[] NOT NULL,
      indexing_status text NOT NULL,
      indexing_status_last_updated timestamptz,
      indexing_progress jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      revision integer NOT NULL,
      PRIMARY KEY (organization, environment, name),
      FOREIGN KEY (organization, environment) REFERENCES environments (organization, name) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE grants (
      organization text NOT NULL,
      scope_key text NOT NULL,
      scope jsonb NOT NULL,
      grantee text NOT NULL,
      principal text,
      workspace text,
      role text NOT NULL,
      message text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (scope_key, grantee),
      CHECK ((principal IS NULL) <> (workspace IS NULL))
    )`
  yield* sql`CREATE INDEX grants_organization ON grants (organization)`
  yield* sql`
    CREATE TABLE access_requests (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      package text NOT NULL,
      user_group_id text NOT NULL,
      permission text NOT NULL,
      message text,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX access_requests_package ON access_requests (organization, environment, package)`
})

const m0002 = Effect.gen(function*() {
  const sql = yield* SqlClient
  // The files of published versions, so that every instance serves the same package.
  yield* sql`
    CREATE TABLE package_files (
      location text NOT NULL,
      path text NOT NULL,
      content bytea NOT NULL,
      PRIMARY KEY (location, path)
    )`
  // Notifications waiting for delivery (the default Notifier writes here and logs).
  yield* sql`
    CREATE TABLE notification_outbox (
      id bigserial PRIMARY KEY,
      kind text NOT NULL,
      recipients jsonb NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz
    )`
})

const m0003 = Effect.gen(function*() {
  const sql = yield* SqlClient
  // Request counts per key and fixed window, shared by every instance.
  yield* sql`
    CREATE TABLE rate_limits (
      key text NOT NULL,
      window_start bigint NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (key, window_start)
    )`
})

/** Every migration, by `<id>_<name>`. Add new ones at the end; never edit an applied one. */
export const migrations = {
  "0001_initial": m0001,
  "0002_package_files_and_outbox": m0002,
  "0003_rate_limits": m0003
} as const

/** Applies pending migrations; safe to run from several instances at once. */
export const run = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: "modelgate_migrations"
})
