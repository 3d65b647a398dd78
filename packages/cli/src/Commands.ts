/**
 * The `modelgate` operator commands on `effect/cli`: migrate, seed, publish, token,
 * api-key create / list / revoke, reencrypt. Each runs core's services (or the
 * storage's own operations) as the system actor against the storage `Store` picks.
 * A command's result goes to stdout (a token or a new key alone on its line, so
 * scripts can capture it); notes go to stderr; a failure is one message and exit code 1.
 */
import { Config, Console, DateTime, Effect, Option, Redacted, Schema } from "effect"
import { join } from "node:path"
import { Argument, Command, Flag } from "effect/cli"
import { SqlClient } from "effect/sql/SqlClient"
import { ApiKeyService, PackageService, type Roles, UserRepo } from "@modelgate/core"
import { PackageFiles, TokenVerifier } from "@modelgate/http"
import { JobsMigrations } from "@modelgate/jobs"
import { Migrations, Reencrypt } from "@modelgate/sql"
import * as DataDir from "./DataDir.ts"
import { OperatorError, report } from "./OperatorError.ts"
import * as Seed from "./Seed.ts"
import * as Store from "./Store.ts"

const line = (text: string) => Console.log(text)
const note = (text: string) => Console.error(text)

/** `modelgate migrate`: brings the schema up to date. */
export const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    // Storage first, then the background jobs' own tables (effect/cluster creates its `cluster_*`
    // tables itself when a runner starts).
    const applied = [...(yield* Migrations.run), ...(yield* JobsMigrations.run)]
    yield* line(
      applied.length === 0
        ? "The schema is up to date; no migration applied"
        : `Applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`
    )
  }).pipe(Effect.provide(Store.layerClient), report)).pipe(
    Command.withDescription("Run the storage migrations (forward-only; safe to repeat, and while other instances start)"),
    Command.withExamples([{ command: "modelgate migrate", description: "Migrate the embedded store in ./.modelgate" }])
  )

/** `modelgate seed <file>`: loads a seed file (idempotent). */
export const seed = Command.make("seed", {
  file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("A seed file (JSON, see docs/seed.md)"))
}, ({ file }) =>
  Effect.gen(function*() {
    const { baseDir, seed } = yield* Seed.read(file)
    const organization = yield* Seed.apply(seed, baseDir)
    yield* line(`Loaded the seed ${file}: ${seed.organizations.length} organization(s)${organization === undefined ? "" : `, default ${organization}`}`)
  }).pipe(Effect.provide(Store.layerServices), report)).pipe(
    Command.withDescription("Load a seed file: users, groups, API keys, organizations, connections, packages. What exists is kept"),
    Command.withExamples([{ command: "modelgate seed ./seed.json", description: "Load ./seed.json (paths inside resolve against its folder)" }])
  )

/** The operator acts with every right, like the seed. */
const operator: Roles.Actor = Seed.systemActor

/** `modelgate publish <dir>`: publishes a package folder as a new version. */
export const publish = Command.make("publish", {
  dir: Argument.Directory("dir", { mustExist: true }).pipe(Argument.withDescription("The package folder (publisher.json and .malloy files)")),
  organization: Flag.String("org").pipe(Flag.withDescription("Organization")),
  environment: Flag.String("env").pipe(Flag.withDescription("Environment")),
  pkg: Flag.String("package").pipe(Flag.withDescription("Package (it must exist)")),
  version: Flag.String("version").pipe(Flag.withDescription("Version id, a semantic version such as 1.2.0")),
  latest: Flag.Boolean("latest").pipe(Flag.withDescription("Make it the package's latest version"), Flag.withDefault(false))
}, ({ dir, environment, latest, organization, pkg, version }) =>
  Effect.gen(function*() {
    const packages = yield* PackageService.PackageService
    const ref = { organization, environment, package: pkg }
    const files = yield* PackageFiles.fromDirectory(dir)
    const published = yield* packages.publish(operator, ref, version, files)
    yield* line(`Published ${organization}/${environment}/${pkg} version ${published.id} (${files.size} files, build status ${published.buildStatus})`)
    if (latest) {
      yield* packages.promote(operator, { ...ref, version })
      yield* line(`Version ${version} is now the latest of ${organization}/${environment}/${pkg}`)
    }
  }).pipe(Effect.provide(Store.layerServices), report)).pipe(
    Command.withDescription("Publish a package folder as a new version of an existing package"),
    Command.withExamples([{
      command: "modelgate publish ./flights --org acme --env prod --package flights --version 1.1.0 --latest",
      description: "Publish version 1.1.0 and make it the latest"
    }])
  )

// What jose accepts as an expiry, kept to the plain forms: a count and a unit.
const Ttl = Schema.String.pipe(Schema.check(Schema.isPattern(/^[1-9][0-9]*(s|m|h|d|w)$/, {
  message: "Expected a duration such as 30m, 1h, 7d (s, m, h, d or w)"
})))

/**
 * The development JWT secret: `MODELGATE_JWT_SECRET` (the seed's `auth.jwtSecret`, when it
 * has one), else the data directory's `jwt-secret`, which the server creates at its first start.
 */
const jwtSecret = Effect.gen(function*() {
  const configured = yield* Config.option(Config.Redacted("MODELGATE_JWT_SECRET"))
  if (Option.isSome(configured)) {
    if (Redacted.value(configured.value).trim() === "") return yield* new OperatorError({ message: "MODELGATE_JWT_SECRET is empty" })
    return configured.value
  }
  const dir = yield* Store.dataDir
  const stored = yield* DataDir.existing(dir, DataDir.jwtSecretFile)
  if (stored === undefined) {
    return yield* new OperatorError({
      message: `No JWT secret: set MODELGATE_JWT_SECRET (the seed's auth.jwtSecret, when it has one), ` +
        `or start the server once so it creates ${join(dir, DataDir.jwtSecretFile)} (MODELGATE_DATA_DIR=${dir})`
    })
  }
  return Redacted.make(stored)
})

/** `modelgate token`: mints a development HS256 token. */
export const token = Command.make("token", {
  sub: Flag.String("sub").pipe(Flag.withDescription("The user id (the token's subject)")),
  email: Flag.String("email").pipe(Flag.withDescription("The user's e-mail address"), Flag.optional),
  audience: Flag.String("audience").pipe(Flag.withDescription("The audience (the seed's auth.audience; the MCP resource URL for the MCP server)"), Flag.optional),
  issuer: Flag.String("issuer").pipe(Flag.withDescription("The issuer (the seed's auth.issuer)"), Flag.optional),
  ttl: Flag.String("ttl").pipe(Flag.withSchema(Ttl), Flag.withDescription("Lifetime: 30m, 1h, 7d…"), Flag.withDefault("1h"))
}, ({ audience, email, issuer, sub, ttl }) =>
  Effect.gen(function*() {
    const secret = yield* jwtSecret
    const signed = yield* Effect.promise(() =>
      TokenVerifier.signHs256(secret, { sub, ...(Option.isSome(email) ? { email: email.value } : {}) }, {
        issuer: Option.getOrUndefined(issuer),
        audience: Option.getOrUndefined(audience),
        expiresIn: ttl
      })
    )
    yield* note(`A token for ${sub}, valid for ${ttl}:`)
    yield* line(signed)
  }).pipe(report)).pipe(
    Command.withDescription("Mint a development HS256 token with MODELGATE_JWT_SECRET or the data directory's jwt-secret"),
    Command.withExamples([{
      command: "modelgate token --sub admin --issuer modelgate-demo --audience modelgate --ttl 2h",
      description: "A token the demo server accepts on its admin API"
    }])
  )

const userFlag = Flag.String("user").pipe(Flag.withDescription("The user id (the JWT sub) owning the keys"))
const owner = (userId: string): Roles.Actor => ({ userId, groups: [] })

/** `modelgate api-key create`: a new key, printed once. */
export const apiKeyCreate = Command.make("create", {
  user: userFlag,
  name: Flag.String("name").pipe(Flag.withDescription("A name to recognize the key by"), Flag.withDefault("cli"))
}, ({ name, user }) =>
  Effect.gen(function*() {
    const known = yield* Effect.isSuccess((yield* UserRepo.UserRepo).get(user))
    const created = yield* (yield* ApiKeyService.ApiKeyService).create(owner(user), name)
    yield* note(
      `Created API key ${created.id} (${created.name}) for ${known ? "user" : "the new user record"} ${user}. ` +
        "It is shown this once (only its hash is stored); send it as `Authorization: ApiKey <key>`:"
    )
    yield* line(created.key)
  }).pipe(Effect.provide(Store.layerServices), report)).pipe(
    Command.withDescription("Create an API key for the MCP server; the key is printed once"),
    Command.withExamples([{ command: "modelgate api-key create --user ada --name laptop", description: "A key for ada" }])
  )

/** `modelgate api-key list`: a user's keys, never the keys themselves. */
export const apiKeyList = Command.make("list", {
  user: userFlag,
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON"), Flag.withDefault(false))
}, ({ json, user }) =>
  Effect.gen(function*() {
    const keys = yield* (yield* ApiKeyService.ApiKeyService).list(owner(user))
    if (json) return yield* line(JSON.stringify(Schema.encodeSync(Schema.Array(ApiKeyService.ApiKeyView))(keys), null, 2))
    if (keys.length === 0) return yield* note(`User ${user} has no API keys`)
    const time = (t: DateTime.Utc | null) => (t === null ? "-" : DateTime.formatIso(t))
    yield* line(["ID", "NAME", "CREATED", "REVOKED", "LAST USED"].join("\t"))
    for (const k of keys) yield* line([k.id, k.name, time(k.createdAt), time(k.revokedAt), time(k.lastUsedAt)].join("\t"))
  }).pipe(Effect.provide(Store.layerServices), report)).pipe(
    Command.withDescription("List a user's API keys (id, name, dates; never the key)"),
    Command.withExamples([{ command: "modelgate api-key list --user ada", description: "ada's keys" }])
  )

/** `modelgate api-key revoke <id>`: revokes a key (its owner is looked up). */
export const apiKeyRevoke = Command.make("revoke", {
  id: Argument.String("id").pipe(Argument.withDescription("The key's id (from create or list)"))
}, ({ id }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    // UserRepo finds keys by owner or hash only; the owner of an id is one indexed read.
    const rows = yield* sql<{ readonly user_id: string }>`SELECT user_id FROM api_keys WHERE id = ${id}`
    const userId = rows[0]?.user_id
    if (userId === undefined) return yield* new OperatorError({ message: `No API key with id ${id}` })
    const before = (yield* (yield* UserRepo.UserRepo).listApiKeys(userId)).find((k) => k.id === id)
    const revoked = yield* (yield* ApiKeyService.ApiKeyService).revoke(owner(userId), id)
    yield* line(
      before?.revokedAt === null
        ? `Revoked API key ${id} of user ${userId}`
        : `API key ${id} of user ${userId} was already revoked (${revoked.revokedAt === null ? "-" : DateTime.formatIso(revoked.revokedAt)})`
    )
  }).pipe(Effect.provide(Store.layerServices), report)).pipe(
    Command.withDescription("Revoke an API key; the MCP server refuses it from then on"),
    Command.withExamples([{ command: "modelgate api-key revoke key_0123456789abcdef", description: "Revoke that key" }])
  )

/** `modelgate api-key`: the API key commands. */
export const apiKey = Command.make("api-key").pipe(
  Command.withDescription("Manage API keys of the MCP server"),
  Command.withSubcommands([apiKeyCreate, apiKeyList, apiKeyRevoke])
)

/** `modelgate reencrypt`: re-seals stored secrets under the current key. */
export const reencrypt = Command.make("reencrypt", {}, () =>
  Effect.gen(function*() {
    const moved = yield* Reencrypt.run
    yield* line(`Re-encrypted the secrets of ${moved} connection(s)`)
  }).pipe(Effect.provide(Store.layerStorage), report)).pipe(
    Command.withDescription("Re-seal every stored secret with the current key of MODELGATE_SECRET_KEYS (after a rotation)"),
    Command.withExamples([{
      command: "MODELGATE_SECRET_KEYS=\"old=…,*new=…\" DATABASE_URL=postgres://… modelgate reencrypt",
      description: "Move the secrets to the key `new`; then `old` can be removed"
    }])
  )

/** The `modelgate` command. */
export const modelgate = Command.make("modelgate").pipe(
  Command.withDescription(
    "Operate a modelgate platform. Storage: DATABASE_URL (a PostgreSQL server; MODELGATE_SECRET_KEYS required) " +
      "or embedded PGlite in MODELGATE_DATA_DIR (default ./.modelgate; not while a server runs on it)"
  ),
  Command.withSubcommands([migrate, seed, publish, token, apiKey, reencrypt])
)

/** Runs `modelgate` on the process arguments. */
export const run = (version: string) => Command.run(modelgate, { version })

/** Runs `modelgate` on the given arguments (for a host application or a test). */
export const runWith = (version: string) => Command.runWith(modelgate, { version })
