/**
 * The text-level guards without a compiler: custom queries are refused for raw SQL, tables and
 * imports on any connection name, and only the package's own DuckDB table paths are made absolute.
 */
import { assert, describe, it } from "@effect/vitest"
import { absoluteTablePaths, refusal } from "../src/internal/QueryGuard.ts"

describe("QueryGuard", () => {
  const refused = [
    ["my_pg.sql(...)", "run: my_pg.sql(\"\"\"select * from pg_shadow\"\"\") -> { select: * }", "SQL sources"],
    ["my_pg . sql (...) with spaces", "run: my_pg . sql ('select 1') -> { select: * }", "SQL sources"],
    ["my_maria.table(...)", "run: my_maria.table('mysql.user') -> { select: * }", "table sources"],
    ["a sql: block on an environment connection", "sql: s is { connection: \"my_pg\" select: \"\"\"select 1\"\"\" }", "sql: blocks"],
    ["an import", "import \"other.malloy\"\nrun: orders -> { aggregate: order_count }", "import statements"],
    ["a raw function", "run: orders -> { group_by: x is pg_read_file!('/etc/passwd') }", "raw SQL function calls"]
  ] as const
  for (const [name, query, reason] of refused) {
    it(`refuses ${name}`, () => {
      const message = refusal(query)
      assert.match(message ?? "", /^Query refused: /)
      assert.include(message, reason)
    })
  }

  it("lets a query over the model's sources through, also with keywords inside strings", () => {
    assert.isUndefined(refusal("run: orders -> { where: note = 'my_pg.sql(' aggregate: order_count }"))
  })

  it("rewrites the package's duckdb table paths and leaves other connections' table names alone", () => {
    const dir = "/cache/pkg"
    const model = "source: a is duckdb.table('data/a.parquet')\nsource: b is my_pg.table('public.orders')\nsource: c is my_duckdb.table('x.y')"
    assert.strictEqual(
      absoluteTablePaths(model, dir),
      "source: a is duckdb.table('/cache/pkg/data/a.parquet')\nsource: b is my_pg.table('public.orders')\nsource: c is my_duckdb.table('x.y')"
    )
  })
})
