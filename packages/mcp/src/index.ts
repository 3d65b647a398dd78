/**
 * `@modelgate/mcp`: the MCP server (Streamable HTTP, official SDK) with the execute_query and
 * get_context tools, ApiKey and bearer authentication, and workspace scoping.
 */
export * as McpServer from "./McpServer.ts"
export * as McpSession from "./McpSession.ts"
export * as McpTools from "./McpTools.ts"
