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
  PermissionRepo,
  Roles,
  SemanticRuntime,
  VersionRepo
} from "@modelgate/core"
import type { PackageVersion } from "@modelgate/core"

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

/** Plain JSON: bigints become numbers (or strings beyond 2^53), dates ISO strings. */
const toJson = (value: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v))

const success = (value: unknown): ToolResult => {
  const json = toJson(value)
  return { content: [{ type: "text", text: JSON.stringify(json) }], structuredContent: json }
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
  source_name: optionalString
})

const decodeArgs = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, tool: string) => {
  const decode = Schema.decodeUnknownExit(schema)
  return (args: unknown) => {
    const exit = decode(args ?? {}, { onExcessProperty: "error" })
    return Exit.isSuccess(exit)
      ? Effect.succeed(exit.value)
      : fail(`Invalid arguments for ${tool}: ${exit.cause.toString().split("\n").slice(0, 6).join(" ")}`)
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
      "remove them from right to left to widen. Ranking is currently a simple word overlap between the question and " +
      "entity names and docs (a placeholder until semantic retrieval lands).",
    inputSchema: {
      type: "object",
      properties: {
        natural_language_query: { ...str, description: "The question" },
        project_name: { ...str, description: "Project to search; only when known" },
        package_name: { ...str, description: "Package to search; requires project_name" },
        model_uri: { ...str, description: "Path of a model file; requires project_name and package_name" },
        source_name: { ...str, description: "Source within the model; requires project_name, package_name and model_uri" }
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
  location: record.location
})

/** `execute_query`. */
export const executeQuery = (call: CallContext, args: unknown): Effect.Effect<ToolResult, never, Services> =>
  Effect.gen(function*() {
    const a = yield* decodeExecuteQuery(args)
    const custom = a.query !== undefined
    const named = a.query_name !== undefined
    if (custom && (named || a.source_name !== undefined)) {
      return yield* fail("Use exactly one pattern: either query alone, or query_name with source_name (source_name must not be given with query)")
    }
    if (!custom && !named) return yield* fail("Give either query (a custom query) or query_name with source_name")
    if (named && a.source_name === undefined) return yield* fail("query_name requires source_name")
    if (custom && a.query?.trim() === "") return yield* fail("query is empty")
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
    Effect.catch((e) => Effect.succeed(failure(e.message))),
    Effect.withSpan("mcp.execute_query")
  )

const stopWords = new Set(["the", "and", "for", "with", "what", "which", "who", "how", "are", "was", "were", "per", "by", "of", "in", "on", "to", "a", "an", "is", "me", "show", "give", "list", "top", "most", "best"])

/** Lower-case words of at least three letters, singular-ish (a trailing s dropped). */
const words = (text: string) =>
  text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 3 && !stopWords.has(w)).map((w) => w.replace(/s$/, ""))

const modelingDocumentation = [
  "Malloy queries: `run: <source> -> { group_by: <dimension>; aggregate: <measure>; where: <condition>; order_by: <field> desc; limit: 10 }`.",
  "Reuse a view: `run: <source> -> <view>` or refine it: `run: <source> -> <view> + { where: ... }`.",
  "Joined fields are written with their path: `products.category`.",
  "Common errors: an unknown field (check the entity names returned here), aggregating a dimension (use a measure or `count()`), and a `where` on a measure (use `having`)."
].join("\n")

/** `get_context`: a placeholder ranking by word overlap; semantic retrieval is issue 6. */
export const getContext = (call: CallContext, args: unknown): Effect.Effect<ToolResult, never, Services> =>
  Effect.gen(function*() {
    const a = yield* decodeGetContext(args)
    // The dependency chain: project_name, then package_name, then model_uri, then source_name.
    if (a.package_name !== undefined && a.project_name === undefined) return yield* fail("package_name requires project_name")
    if (a.model_uri !== undefined && (a.project_name === undefined || a.package_name === undefined)) {
      return yield* fail("model_uri requires project_name and package_name")
    }
    if (a.source_name !== undefined && (a.project_name === undefined || a.package_name === undefined || a.model_uri === undefined)) {
      return yield* fail("source_name requires project_name, package_name and model_uri")
    }
    const organizations = yield* OrganizationRepo.OrganizationRepo
    const packages = yield* PackageRepo.PackageRepo
    const runtime = yield* SemanticRuntime.SemanticRuntime
    const projects = a.project_name !== undefined
      ? [a.project_name]
      : (yield* organizations.listEnvironments(call.organization)).map((e) => e.name)
    const question = new Set(words(a.natural_language_query))
    const sources: Array<Record<string, unknown>> = []
    for (const project of projects) {
      const names = a.package_name !== undefined ? [a.package_name] : (yield* packages.list({ organization: call.organization, environment: project })).map((p) => p.name)
      for (const pkg of names) {
        // A named package the caller may not see is an error; others it may not see are skipped.
        const served = servedVersion(call, project, pkg, undefined)
        const record = a.package_name !== undefined
          ? yield* served
          : yield* served.pipe(Effect.catch(() => Effect.succeed(undefined)))
        if (record === undefined) continue
        const models = yield* runtime.describe(locationOf(record)).pipe(Effect.mapError((e) => new ToolFailure({ message: e.message })))
        for (const model of models) {
          if (a.model_uri !== undefined && model.modelPath !== a.model_uri) continue
          const bySource = new Map<string, Array<Record<string, unknown> & { readonly score: number }>>()
          for (const entity of model.entities) {
            if (a.source_name !== undefined && entity.source !== a.source_name) continue
            const text = [entity.name, ...entity.path, entity.doc ?? ""].join(" ")
            const matched = [...new Set(words(text))].filter((w) => question.has(w))
            if (matched.length === 0) continue
            const score = Math.min(1, matched.length / Math.max(1, question.size))
            const list = bySource.get(entity.source) ?? []
            list.push({
              name: [...entity.path, entity.name].join("."),
              field_type: entity.kind,
              data_type: entity.dataType,
              description: entity.doc ?? "",
              score,
              match_reason: `words in common with the question: ${matched.join(", ")}`
            })
            bySource.set(entity.source, list)
          }
          for (const [source, entities] of bySource) {
            entities.sort((x, y) => y.score - x.score)
            const top = entities.slice(0, 25)
            sources.push({
              project_name: project,
              package_name: pkg,
              model_uri: model.modelPath,
              source_name: source,
              version_id: record.id,
              phrases: [{
                phrase: a.natural_language_query,
                phrase_description: "The whole question (phrases are extracted once the retrieval package lands, issue 6)",
                overall_score: top[0]?.score ?? 0,
                entities: top
              }]
            })
          }
        }
      }
    }
    sources.sort((x, y) => score(y) - score(x))
    return success({
      sources,
      next_steps: [
        "Pick the source whose entities best match the question.",
        "Call execute_query with project_name, package_name and model_uri from that source: a view by query_name + source_name, or a custom query `run: <source> -> { group_by: ...; aggregate: ... }` using the entity names returned.",
        "If nothing matches, remove parameters from right to left to widen the search."
      ],
      modeling_documentation: modelingDocumentation
    })
  }).pipe(
    Effect.catch((e) => Effect.succeed(failure(e.message))),
    Effect.withSpan("mcp.get_context")
  )

const score = (source: Record<string, unknown>): number => {
  const phrases = source["phrases"]
  if (!Array.isArray(phrases)) return 0
  const first: unknown = phrases[0]
  return typeof first === "object" && first !== null && "overall_score" in first && typeof first.overall_score === "number" ? first.overall_score : 0
}
