/**
 * `npm start`: the example server from environment variables. PORT (4000), HOST
 * (127.0.0.1), DATABASE_URL (absent: embedded PGlite in MODELGATE_DATA_DIR,
 * default ./.modelgate), MODELGATE_SEED (absent: the built-in demo seed),
 * MODELGATE_SECRET_KEYS, MODELGATE_SMTP_URL / MODELGATE_SMTP_FROM (e-mail delivery of
 * notifications). SIGTERM drains and exits 0.
 */
import { Cause, Config, Effect, Exit, Layer, Option, Redacted, Runtime, Schema } from "effect"
import { Connection } from "@modelgate/core"
import { NodeRuntime } from "@effect/platform-node"
import * as Server from "./Server.ts"

// MODELGATE_CONNECTION_TEMPLATES: a JSON object of template name → connection settings (type,
// settings object, credentials), e.g. {"bq_demo": {"type": "bigquery", "bigqueryConnection": {...}}}.
const templates = Effect.gen(function*() {
  const text = yield* Config.option(Config.Redacted("MODELGATE_CONNECTION_TEMPLATES"))
  if (Option.isNone(text)) return undefined
  const decoded = Schema.decodeUnknownExit(Schema.fromJsonString(Schema.Record(Connection.ConnectionTemplate, Connection.ConnectionSettings.mapFields(({ name: _name, ...rest }) => rest))))(Redacted.value(text.value))
  if (Exit.isFailure(decoded)) return yield* Effect.die(new Error(`MODELGATE_CONNECTION_TEMPLATES: ${Cause.pretty(decoded.cause)}`))
  return decoded.value
})

const options = Effect.gen(function*() {
  return {
    templates: yield* templates,
    port: yield* Config.Port("PORT").pipe(Config.withDefault(4000)),
    host: yield* Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
    databaseUrl: Option.getOrUndefined(yield* Config.option(Config.String("DATABASE_URL"))),
    dataDir: yield* Config.String("MODELGATE_DATA_DIR").pipe(Config.withDefault("./.modelgate")),
    seedPath: Option.getOrUndefined(yield* Config.option(Config.String("MODELGATE_SEED"))),
    secretKeys: Option.map(yield* Config.option(Config.Redacted("MODELGATE_SECRET_KEYS")), Redacted.value).pipe(Option.getOrUndefined),
    rateLimit: yield* Config.Int("MODELGATE_RATE_LIMIT").pipe(Config.withDefault(600)),
    connectTimeoutMillis: yield* Config.Int("MODELGATE_CONNECT_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
    adminHost: Option.getOrUndefined(yield* Config.option(Config.String("MODELGATE_ADMIN_HOST"))),
    smtpUrl: Option.map(yield* Config.option(Config.Redacted("MODELGATE_SMTP_URL")), Redacted.value).pipe(Option.getOrUndefined),
    smtpFrom: Option.getOrUndefined(yield* Config.option(Config.String("MODELGATE_SMTP_FROM"))),
    mcpAudience: Option.getOrUndefined(yield* Config.option(Config.String("MODELGATE_MCP_AUDIENCE"))),
    authorizationServers: Option.map(yield* Config.option(Config.String("MODELGATE_OAUTH_AUTHORIZATION_SERVERS")), (s) =>
      s.split(",").map((x) => x.trim()).filter((x) => x !== "")).pipe(Option.getOrUndefined),
    requestLog: yield* Config.Boolean("MODELGATE_REQUEST_LOG").pipe(Config.withDefault(true))
  }
})

const announce = (started: Server.Started) =>
  Effect.sync(() => {
    const org = started.organization ?? "<organization>"
    process.stdout.write(
      [
        "",
        `modelgate is serving at ${started.url}`,
        `  health:   ${started.url}/health`,
        `  admin:    ${started.url}/api/v0/organizations/${org}/environments/...`,
        `  OpenAPI:  ${started.url}/api/v0/openapi.json   docs: ${started.url}/api/v0/docs`,
        `  MCP:      ${started.url}/mcp   (workspace-scoped: ${started.url}/mcp/workspace/<workspace>)`,
        `  token:    ${started.token}`,
        ...(started.apiKey === undefined ? [] : [`  API key:  ${started.apiKey}   (header: Authorization: ApiKey <key>)`]),
        `  try:      curl -H "Authorization: Bearer ${started.token}" ${started.url}/api/v0/organizations/${org}/environments/demo/connections`,
        ""
      ].join("\n")
    )
  })

// SIGTERM (and SIGINT) interrupt the server: open requests drain, storage closes, and a clean
// shutdown exits 0. A failure to start or run exits 1.
const teardown: Runtime.Teardown = (exit, onExit) =>
  onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)

Layer.launch(Layer.unwrap(Effect.map(options, (o) => Server.layer(o, announce)))).pipe(NodeRuntime.runMain({ teardown }))
