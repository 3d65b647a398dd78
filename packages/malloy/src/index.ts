/**
 * `@modelgate/malloy`: the semantic runtime adapter. It implements core's `SemanticRuntime` port
 * with the Malloy compiler, a sandboxed DuckDB per package version, and drivers for the
 * PostgreSQL and MySQL connections of the version's environment.
 */
export * as Materializer from "./Materializer.ts"
export * as PackageCache from "./PackageCache.ts"
export * as Runtime from "./Runtime.ts"
