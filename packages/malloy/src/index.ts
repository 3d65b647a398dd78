/**
 * `@modelgate/malloy`: the semantic runtime adapter. It implements core's `SemanticRuntime` port
 * with the Malloy compiler and a sandboxed DuckDB per package version.
 */
export * as PackageCache from "./PackageCache.ts"
export * as Runtime from "./Runtime.ts"
