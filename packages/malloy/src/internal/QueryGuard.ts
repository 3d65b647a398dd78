/**
 * Text-level guards around the Malloy compiler: the check that refuses custom query text able to
 * leave the model (imports, SQL sources, raw SQL), and the rewrite of a model's relative table
 * paths to absolute ones inside its package folder. The DuckDB sandbox is the second line behind
 * the check; the rewrite works around sandboxed DuckDB resolving relative paths against the
 * process's working directory instead of the connection's `workingDirectory`.
 */
import { isAbsolute, join, normalize, sep } from "node:path"

/**
 * Replaces the contents of comments and string literals with spaces (keeping the quotes and
 * length), so keyword checks see only code: a filter value such as `'import'` is not a statement.
 */
export const maskLiterals = (text: string): string =>
  text.replace(
    /"""[\s\S]*?(?:"""|$)|--[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?|`[^`\n]*`?/g,
    (literal) => {
      const comment = literal.startsWith("--") || literal.startsWith("//") || literal.startsWith("/*")
      const keep = comment ? 0 : literal.startsWith('"""') ? 3 : 1
      return literal.slice(0, keep) + literal.slice(keep).replace(/[^\n]/g, " ")
    }
  )

const refusals: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bimport\b/, "import statements are not allowed in a custom query"],
  [/\bsql\s*:/, "sql: blocks are not allowed in a custom query; use the model's sources"],
  [/\.\s*sql\s*\(/, "SQL sources (.sql(...)) are not allowed in a custom query; use the model's sources"],
  [/\.\s*table\s*\(/, "table sources (.table(...)) are not allowed in a custom query; use the model's sources"],
  [/\bsql_[a-z_]+\s*\(/i, "raw SQL expressions (sql_*(...)) are not allowed in a custom query"],
  [/[A-Za-z_]\w*\s*!\s*(?:[A-Za-z_]\w*\s*)?\(/, "raw SQL function calls (name!(...)) are not allowed in a custom query"],
  [/^\s*##!/m, "compiler flags (##!) are not allowed in a custom query"]
]

/** Why a custom query is refused before compiling, or `undefined` when it only uses the model. */
export const refusal = (query: string): string | undefined => {
  const code = maskLiterals(query)
  for (const [pattern, message] of refusals) {
    if (pattern.test(code)) return `Query refused: ${message}.`
  }
  return undefined
}

/** The query text to compile: `run: ` is prepended when the text has no `run:` statement. */
export const runnable = (query: string): string =>
  /\brun\s*:/.test(maskLiterals(query)) ? query : `run: ${query}`

/**
 * Rewrites `<connection>.table('relative/path')` in model text (the package's own DuckDB
 * connection, `duckdb` by default) to the absolute path inside `packageDir`. Paths that are
 * absolute, URLs, or escape the folder are left alone for the sandbox to refuse; tables of other
 * connections (`my_pg.table('public.orders')`) are names, not paths, and are left alone too.
 */
export const absoluteTablePaths = (text: string, packageDir: string, connection = "duckdb"): string =>
  text.replace(new RegExp(`(\\b${connection}\\s*\\.\\s*table\\s*\\(\\s*)(['"])([^'"\\n]*)\\2`, "g"), (whole, prefix: string, quote: string, path: string) => {
    if (path === "" || isAbsolute(path) || /^[a-z][a-z0-9+.-]*:/i.test(path)) return whole
    const absolute = normalize(join(packageDir, path))
    if (!absolute.startsWith(packageDir + sep)) return whole
    return `${prefix}${quote}${absolute.replaceAll("\\", "\\\\").replaceAll(quote, `\\${quote}`)}${quote}`
  })
