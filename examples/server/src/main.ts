/**
 * `npm start`: the example server from environment variables, every one read here through
 * `Config` and listed in docs/configuration.md. A missing or malformed value stops start-up
 * with a message naming the variable and exit code 1; SIGTERM drains and exits 0.
 */
import { enableCompileCache } from "node:module"
import { Cause, Config, Effect, Exit, Layer, Option, Redacted, Runtime, Schema } from "effect"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Connection, SecretCipher } from "@modelgate/core"
import * as Observability from "./Observability.ts"
import * as Server from "./Server.ts"

// The application's modules load after the server listens; Node's compile cache (in the OS temp
// directory, or NODE_COMPILE_CACHE) makes every start after the first load them faster.
enableCompileCache()

/** A configuration value that parses but does not make sense; the message names the variable. */
class InvalidConfiguration extends Schema.TaggedError<InvalidConfiguration>()("InvalidConfiguration", { message: Schema.String }) {}

const optionalString = (name: string) => Config.option(Config.String(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")), Config.map(Option.getOrUndefined))
const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(Config.map((o) => Option.getOrUndefined(Option.filter(Option.map(o, Redacted.value), (s) => s.trim() !== ""))))
const positiveInt = (name: string, fallback: number) => Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), name).pipe(Config.withDefault(fallback))

// MODELGATE_CONNECTION_TEMPLATES: a JSON object of template name → connection settings (type,
// settings object, credentials), e.g. {"bq_demo": {"type": "bigquery", "bigqueryConnection": {...}}}.
const templates = Effect.gen(function*() {
  const text = yield* optionalSecret("MODELGATE_CONNECTION_TEMPLATES")
  if (text === undefined) return undefined
  const decoded = Schema.decodeUnknownExit(Schema.fromJsonString(Schema.Record(Connection.ConnectionTemplate, Connection.ConnectionSettings.mapFields(({ name: _name, ...rest }) => rest))))(text)
  if (Exit.isFailure(decoded)) return yield* new InvalidConfiguration({ message: `MODELGATE_CONNECTION_TEMPLATES: ${Cause.pretty(decoded.cause)}` })
  return decoded.value
})

// MODELGATE_OAUTH_JWKS_URL with MODELGATE_OAUTH_ISSUER: the authorization server whose access
// tokens (audience: the MCP resource) the MCP server accepts.
const oauth = Effect.gen(function*() {
  const jwksUrl = yield* optionalString("MODELGATE_OAUTH_JWKS_URL")
  const issuer = yield* optionalString("MODELGATE_OAUTH_ISSUER")
  if (jwksUrl === undefined && issuer === undefined) return undefined
  if (jwksUrl === undefined || issuer === undefined) {
    return yield* new InvalidConfiguration({ message: "MODELGATE_OAUTH_JWKS_URL and MODELGATE_OAUTH_ISSUER go together" })
  }
  if (!/^https?:$/.test(URL.parse(jwksUrl)?.protocol ?? "")) {
    return yield* new InvalidConfiguration({ message: `MODELGATE_OAUTH_JWKS_URL: not an http(s) URL: ${jwksUrl}` })
  }
  return { jwksUrl, issuer }
})

const server = Effect.gen(function*() {
  const databaseUrl = yield* optionalString("DATABASE_URL")
  const secretKeys = yield* optionalSecret("MODELGATE_SECRET_KEYS")
  if (databaseUrl !== undefined && secretKeys === undefined) {
    return yield* new InvalidConfiguration({ message: "MODELGATE_SECRET_KEYS is required with DATABASE_URL (see docs/operations.md)" })
  }
  if (secretKeys !== undefined) {
    const keyring = SecretCipher.parseKeyring(secretKeys)
    if (keyring._tag === "Failure") return yield* new InvalidConfiguration({ message: `MODELGATE_SECRET_KEYS: ${keyring.failure}` })
  }
  const runnerPort = yield* Config.option(Config.Port("MODELGATE_RUNNER_PORT"))
  // The address other job runners reach this one at (MODELGATE_RUNNER_PORT makes it a runner).
  const runnerHost = yield* Config.String("MODELGATE_RUNNER_HOST").pipe(Config.withDefault("127.0.0.1"))
  const options: Server.Options = {
    templates: yield* templates,
    port: yield* Config.Port("PORT").pipe(Config.withDefault(4000)),
    host: yield* Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
    databaseUrl,
    dataDir: yield* Config.String("MODELGATE_DATA_DIR").pipe(Config.withDefault("./.modelgate")),
    seedPath: yield* optionalString("MODELGATE_SEED"),
    secretKeys,
    rateLimit: yield* positiveInt("MODELGATE_RATE_LIMIT", 600),
    connectTimeoutMillis: yield* positiveInt("MODELGATE_CONNECT_TIMEOUT_MS", 10_000),
    adminHost: yield* optionalString("MODELGATE_ADMIN_HOST"),
    smtpUrl: yield* optionalSecret("MODELGATE_SMTP_URL"),
    smtpFrom: yield* optionalString("MODELGATE_SMTP_FROM"),
    mcpAudience: yield* optionalString("MODELGATE_MCP_AUDIENCE"),
    authorizationServers: Option.getOrUndefined(Option.map(Option.fromUndefinedOr(yield* optionalString("MODELGATE_OAUTH_AUTHORIZATION_SERVERS")), (s) =>
      s.split(",").map((x) => x.trim()).filter((x) => x !== ""))),
    requestLog: yield* Config.Boolean("MODELGATE_REQUEST_LOG").pipe(Config.withDefault(true)),
    runner: Option.getOrUndefined(Option.map(runnerPort, (port) => ({ port, host: runnerHost }))),
    poolSize: yield* positiveInt("MODELGATE_DB_POOL_SIZE", 10),
    oauth: yield* oauth
  }

  const otlpHeaders = yield* optionalSecret("OTEL_EXPORTER_OTLP_HEADERS")
  const headers = otlpHeaders === undefined ? undefined : Observability.parseHeaders(otlpHeaders)
  if (otlpHeaders !== undefined && headers === undefined) {
    return yield* new InvalidConfiguration({ message: "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs separated by commas" })
  }
  const otlpEndpoint = yield* optionalString("OTEL_EXPORTER_OTLP_ENDPOINT")
  if (otlpEndpoint !== undefined && !/^https?:$/.test(URL.parse(otlpEndpoint)?.protocol ?? "")) {
    return yield* new InvalidConfiguration({ message: `OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL: ${otlpEndpoint}` })
  }
  const observability: Observability.Options = {
    // A terminal gets the readable form; a pipe, a file or a log collector gets JSON lines.
    logFormat: yield* Config.Literals(["json", "pretty"], "MODELGATE_LOG_FORMAT").pipe(Config.withDefault(process.stderr.isTTY ? "pretty" : "json")),
    logLevel: yield* Config.LogLevel("MODELGATE_LOG_LEVEL").pipe(Config.withDefault("Info")),
    otlpEndpoint,
    serviceName: yield* Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("modelgate")),
    otlpHeaders: headers,
    tracesIntervalMillis: yield* positiveInt("OTEL_BSP_SCHEDULE_DELAY", 5_000),
    metricsIntervalMillis: yield* positiveInt("OTEL_METRIC_EXPORT_INTERVAL", 10_000)
  }
  return Server.layer(options, announce).pipe(Layer.provide(Observability.layer(observability)))
})

const announce = (started: Server.Started) =>
  Effect.sync(() => {
    const org = started.organization ?? "<organization>"
    process.stdout.write(
      [
        "",
        `modelgate is serving at ${started.url}`,
        `  health:   ${started.url}/health   ready: ${started.url}/ready`,
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

// A configuration error is reported in one line naming the variable (before any logger is set up).
const configured = server.pipe(
  Effect.tapError((error) => Effect.sync(() => process.stderr.write(`modelgate: invalid configuration: ${error.message}\n`)))
)

// SIGTERM (and SIGINT) interrupt the server: open requests drain, storage closes, and a clean
// shutdown exits 0. A failure to start or run exits 1.
const teardown: Runtime.Teardown = (exit, onExit) =>
  onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)

Layer.launch(Layer.unwrap(configured)).pipe(NodeRuntime.runMain({ teardown }))
