/**
 * The two MCP tools as Effects over core's ports: `execute_query` runs a query on a published
 * version the caller may view, `get_context` describes the matching published models. Both
 * resolve packages through the same rule (Access policy, workspace narrowing, archived and
 * error_state versions never served), so the admin API and the MCP server share one policy.
 */
import { Effect, Exit, Schema } from "effect"
import {
  Access,
  OrganizationRepo,
  PackageRepo,
  PackageVersion,
  PermissionRepo,
  Roles,
  SemanticRuntime,
  VersionRepo
} from "@modelgate/core"
import { Guidance, Retrieval } from "@modelgate/retrieval"

/** Who calls and through which URL. */
export interface CallContext {
  readonly actor: Roles.Actor
  readonly organization: string
  /** Set on `/mcp/workspace/{workspace}`: only the workspace's packages are visible. */
  readonly workspace: string | undefined
  readonly rowLimit: number
}

/** The services the tools use. */
export type Services =
  | Access.Access
  | PackageRepo.PackageRepo
  | VersionRepo.VersionRepo
  | PermissionRepo.PermissionRepo
  | OrganizationRepo.OrganizationRepo
  | SemanticRuntime.SemanticRuntime
  | Retrieval.Retrieval

/** A tool result as the MCP protocol carries it. */
export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: Array<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

/** A tool failure whose message is shown to the caller (`isError: true`). */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", { message: Schema.String }) {}

const fail = (message: string) => Effect.fail(new ToolFailure({ message }))

/**
 * Protocol misuse: arguments that do not fit the tool's input schema (missing, unknown or
 * mistyped), or parameters given in a combination the tool forbids. The server answers it as a
 * JSON-RPC error -32602 (invalid params), not as a tool result.
 */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", { message: Schema.String }) {}

const invalid = (message: string) => Effect.fail(new InvalidParams({ message }))

/** Plain JSON: bigints become numbers (or strings beyond 2^53), dates ISO strings. */
// The JSON text of a result (bigints as numbers when safe, else strings); the structured
// content is parsed back from it, so both carry exactly the same JSON.
const toJsonText = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v)

const success = (value: unknown): ToolResult => {
  const text = toJsonText(value)
  return { content: [{ type: "text", text }], structuredContent: JSON.parse(text) as Record<string, unknown> }
}

const failure = (message: string): ToolResult => ({ content: [{ type: "text", text: message }], isError: true })

const optionalString = Schema.optionalKey(Schema.String)

const ExecuteQueryArgs = Schema.Struct({
  project_name: Schema.String,
  package_name: Schema.String,
  model_uri: Schema.String,
  query: optionalString,
  query_name: optionalString,
  source_name: optionalString,
  version_id: optionalString
})

const GetContextArgs = Schema.Struct({
  natural_language_query: Schema.String,
  project_name: optionalString,
  package_name: optionalString,
  model_uri: optionalString,
  source_name: optionalString,
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })))
})

const decodeArgs = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, tool: string) => {
  const decode = Schema.decodeUnknownExit(schema)
  return (args: unknown) => {
    const exit = decode(args ?? {}, { onExcessProperty: "error" })
    return Exit.isSuccess(exit)
      ? Effect.succeed(exit.value)
      : invalid(`Invalid arguments for ${tool}: ${exit.cause.toString().split("\n").slice(0, 6).join(" ")}`)
  }
}

const decodeExecuteQuery = decodeArgs(ExecuteQueryArgs, "execute_query")
const decodeGetContext = decodeArgs(GetContextArgs, "get_context")

const str = { type: "string" } as const

/** The tools' descriptors for `tools/list`. */
export const definitions = [
  {
    name: "execute_query",
    title: "Execute a Malloy query",
    description:
      "Runs a query against a published Malloy model and returns JSON rows. Use exactly one pattern: " +
      "(1) a custom query in `query` (Malloy, e.g. `run: orders -> { aggregate: order_count }`), or " +
      "(2) a predefined view or query by `query_name` with its `source_name`. `project_name` is the " +
      "environment, `model_uri` the model file's path in the package; `version_id` defaults to the latest version.",
    inputSchema: {
      type: "object",
      properties: {
        project_name: { ...str, description: "Project (environment) containing the model" },
        package_name: { ...str, description: "Package containing the model" },
        model_uri: { ...str, description: "Path of the model file in the package, e.g. ecommerce.malloy" },
        query: { ...str, description: "Custom query code; do not give source_name with it" },
        query_name: { ...str, description: "Name of a predefined query or view; requires source_name" },
        source_name: { ...str, description: "Source of query_name; omitted with a custom query" },
        version_id: { ...str, description: "A specific package version; defaults to the latest" }
      },
      required: ["project_name", "package_name", "model_uri"],
      additionalProperties: false
    },
    outputSchema: {
      type: "object",
      properties: {
        data: { type: "array", items: { type: "object" } },
        totalRows: { type: "number" },
        executionTime: { type: "number", description: "Milliseconds" },
        metadata: {
          type: "object",
          properties: {
            truncated: { type: "boolean" },
            rowLimit: { type: "number" },
            sql: str,
            version: str
          },
          required: ["truncated", "rowLimit", "version"]
        }
      },
      required: ["data", "totalRows", "executionTime", "metadata"]
    },
    annotations: { title: "Execute a Malloy query", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  },
  {
    name: "get_context",
    title: "Find model entities for a question",
    description:
      "Finds the sources, dimensions, measures and views of the published models that bear on a question. " +
      "Narrow with project_name, then package_name, then model_uri, then source_name (each requires the ones before); " +
      "remove them from right to left to widen. The question is split into phrases; each phrase is matched to entities " +
      "by name, by the modelers' documentation, by meaning, and by stored values of dimensions, with scores from 0 to 1. " +
      "A question unrelated to every model returns no sources.",
    inputSchema: {
      type: "object",
      properties: {
        natural_language_query: { ...str, description: "The question" },
        project_name: { ...str, description: "Project to search; only when known" },
        package_name: { ...str, description: "Package to search; requires project_name" },
        model_uri: { ...str, description: "Path of a model file; requires project_name and package_name" },
        source_name: { ...str, description: "Source within the model; requires project_name, package_name and model_uri" },
        limit: { type: "integer", minimum: 1, maximum: 50, description: "Entities per phrase and source (default 10)" }
      },
      required: ["natural_language_query"],
      additionalProperties: false
    },
    annotations: { title: "Find model entities for a question", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }
] as const

/** Short instructions sent at initialize. */
export const instructions =
  "modelgate serves published Malloy models. Call get_context with the user's question to find the " +
  "sources, fields and views that bear on it, then execute_query with a view (query_name + source_name) " +
  "or a custom Malloy query. Results are read-only JSON."

/** A version the caller may query, or a ToolFailure that reveals nothing it may not see. */
const servedVersion = Effect.fnUntraced(function*(
  call: CallContext,
  project: string,
  pkg: string,
  versionId: string | undefined
) {
  const access = yield* Access.Access
  const packages = yield* PackageRepo.PackageRepo
  const versions = yield* VersionRepo.VersionRepo
  const permissions = yield* PermissionRepo.PermissionRepo
  const what = `Package ${project}/${pkg}`
  const notFound = `${what} not found`
  const scope = Roles.packageScope(call.organization, project, pkg)
  yield* access.authorize(call.actor, "query.execute", scope, what).pipe(
    Effect.mapError((e) => new ToolFailure({ message: e._tag === "ResourceNotFound" ? notFound : e.message }))
  )
  if (call.workspace !== undefined) {
    const ws = call.workspace
    const grants = yield* permissions.listAt(scope)
    if (!grants.some((g) => g.workspace === ws)) return yield* fail(`${what} is not available in workspace ${ws}`)
  }
  const ref = { organization: call.organization, environment: project, package: pkg }
  const found = yield* packages.get(ref).pipe(Effect.mapError(() => new ToolFailure({ message: notFound })))
  const id = versionId ?? found.latestVersionId
  if (id === null) return yield* fail(`${what} has no latest version; pass version_id`)
  const record = yield* versions.get({ ...ref, version: id }).pipe(
    Effect.mapError(() => new ToolFailure({ message: `Version ${id} of ${what} not found` }))
  )
  // Archived and error_state versions are never served.
  if (record.archiveStatus !== "unarchive") {
    return yield* fail(`Version ${id} of ${what} is ${record.archiveStatus === "archive" ? "archived" : "in error_state"} and is not served`)
  }
  return record
})

const locationOf = (record: PackageVersion.VersionRecord): SemanticRuntime.VersionLocation => ({
  organization: record.organization,
  environment: record.environment,
  package: record.package,
  version: record.id,
  location: record.location,
  // Persist sources whose build succeeded are read from their tables.
  builds: PackageVersion.builtTablesOf(record)
})

/** `execute_query`. */
export const executeQuery = (call: CallContext, args: unknown): Effect.Effect<ToolResult, InvalidParams, Services> =>
  Effect.gen(function*() {
    const a = yield* decodeExecuteQuery(args)
    const custom = a.query !== undefined
    const named = a.query_name !== undefined
    if (custom && (named || a.source_name !== undefined)) {
      return yield* invalid("Use exactly one pattern: either query alone, or query_name with source_name (source_name must not be given with query)")
    }
    if (!custom && !named) return yield* invalid("Give either query (a custom query) or query_name with source_name")
    if (named && a.source_name === undefined) return yield* invalid("query_name requires source_name")
    if (custom && a.query?.trim() === "") return yield* invalid("query is empty")
    const record = yield* servedVersion(call, a.project_name, a.package_name, a.version_id)
    const runtime = yield* SemanticRuntime.SemanticRuntime
    const request: SemanticRuntime.QueryRequest = a.query !== undefined
      ? { _tag: "Custom", modelPath: a.model_uri, query: a.query }
      : { _tag: "Named", modelPath: a.model_uri, sourceName: a.source_name ?? "", queryName: a.query_name ?? "" }
    const result = yield* runtime.execute(locationOf(record), request, { rowLimit: call.rowLimit }).pipe(
      Effect.mapError((e) => new ToolFailure({ message: e._tag === "QueryFailed" ? `Query failed (${e.reason}): ${e.message}` : e.message }))
    )
    return success({
      data: result.rows,
      totalRows: result.totalRows,
      executionTime: result.executionTimeMillis,
      metadata: {
        truncated: result.truncated,
        rowLimit: call.rowLimit,
        ...(result.sql === undefined ? {} : { sql: result.sql }),
        version: record.id
      }
    })
  }).pipe(
    Effect.catchTag("ToolFailure", (e) => Effect.succeed(failure(e.message))),
    Effect.withSpan("mcp.execute_query")
  )

/** `get_context`: phrases of the question matched against the index of every version the caller may view. */
export const getContext = (call: CallContext, args: unknown): Effect.Effect<ToolResult, InvalidParams, Services> =>
  Effect.gen(function*() {
    const a = yield* decodeGetContext(args)
    // The dependency chain: project_name, then package_name, then model_uri, then source_name.
    if (a.package_name !== undefined && a.project_name === undefined) return yield* invalid("package_name requires project_name")
    if (a.model_uri !== undefined && (a.project_name === undefined || a.package_name === undefined)) {
      return yield* invalid("model_uri requires project_name and package_name")
    }
    if (a.source_name !== undefined && (a.project_name === undefined || a.package_name === undefined || a.model_uri === undefined)) {
      return yield* invalid("source_name requires project_name, package_name and model_uri")
    }
    if (a.natural_language_query.trim() === "") return yield* invalid("natural_language_query is empty")
    const organizations = yield* OrganizationRepo.OrganizationRepo
    const packages = yield* PackageRepo.PackageRepo
    const retrieval = yield* Retrieval.Retrieval
    const projects = a.project_name !== undefined
      ? [a.project_name]
      : (yield* organizations.listEnvironments(call.organization)).map((e) => e.name)
    const targets: Array<Retrieval.Target> = []
    for (const project of projects) {
      const names = a.package_name !== undefined
        ? [a.package_name]
        : (yield* packages.list({ organization: call.organization, environment: project })).map((p) => p.name)
      for (const pkg of names) {
        // A named package the caller may not see is an error; others it may not see are skipped.
        const served = servedVersion(call, project, pkg, undefined)
        const record = a.package_name !== undefined
          ? yield* served
          : yield* served.pipe(Effect.catch(() => Effect.succeed(undefined)))
        if (record === undefined) continue
        targets.push({
          project,
          package: pkg,
          version: locationOf(record),
          versionId: record.id,
          modelUri: a.model_uri,
          sourceName: a.source_name
        })
      }
    }
    const result = yield* retrieval.search({ question: a.natural_language_query, targets, limit: a.limit }).pipe(
      Effect.mapError((e) => new ToolFailure({ message: e.message }))
    )
    return success({
      sources: result.sources,
      next_steps: Guidance.nextSteps,
      modeling_documentation: Guidance.modelingDocumentation
    })
  }).pipe(
    Effect.catchTag("ToolFailure", (e) => Effect.succeed(failure(e.message))),
    Effect.withSpan("mcp.get_context")
  )
