import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Naming } from "@modelgate/core"

const accepts = (schema: Schema.Codec<string>, value: string) => Schema.is(schema)(value)

const cases = (
  name: string,
  schema: Schema.Codec<string>,
  valid: ReadonlyArray<string>,
  invalid: ReadonlyArray<string>
) =>
  describe(name, () => {
    it.each(valid)("accepts %j", (value) => assert.isTrue(accepts(schema, value)))
    it.each(invalid)("rejects %j", (value) => assert.isFalse(accepts(schema, value)))
  })

cases(
  "IdentifierPattern",
  Naming.Identifier,
  ["demo", "Sales Team", "a_b-c 1", "0", " ", "UPPER"],
  ["", "a.b", "a/b", "é", "a\nb", "name!", "a\tb", "café"]
)

cases(
  "versionId path",
  Naming.VersionIdPath,
  ["1.0.0", "1.0.0-rc.1", "latest", "v_2", "-.-"],
  ["", "1.0.0+build", "1 0", "a/b", "1.0.0~1"]
)

cases(
  "semantic version id",
  Naming.SemanticVersion,
  [
    "0.0.0",
    "1.2.3",
    "10.20.30",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-0.3.7",
    "1.0.0-x.7.z.92",
    "1.0.0-x-y-z.--",
    "1.0.0-alpha+001",
    "1.0.0+20130313144700",
    "1.0.0-beta+exp.sha.5114f85",
    "1.0.0+21AF26D3----117B344092BD",
    "1.0.0-0a",
    "1.0.0-00a"
  ],
  [
    "",
    "1",
    "1.2",
    "1.2.3.4",
    "01.2.3",
    "1.02.3",
    "1.2.03",
    "v1.2.3",
    " 1.2.3",
    "1.2.3-",
    "1.2.3+",
    "1.2.3-01",
    "1.2.3-alpha..1",
    "1.2.3-alpha_1",
    "1.2.3+build..1",
    "1.2.3+build_1",
    "-1.2.3",
    "1.2.3-alpha+"
  ]
)

cases(
  "TableNamePattern",
  Naming.TableNamePattern,
  ["public.orders", "public.*", "analytics.public.orders", "analytics.public.*", "a-b.c_d", "0.1"],
  ["orders", "*", "*.orders", "public.*.orders", "*.*", "a.b.c.d", "a..b", "public.or ders", "public.order$", ".a", "a.", "a.b*"]
)

cases(
  "AttachedDatabase name",
  Naming.AttachedDatabaseName,
  ["db", "_private", "Sales_2024", "a1"],
  ["", "1db", "my-db", "my db", "db.x"]
)

cases(
  "userGroupId",
  Naming.UserGroupId,
  ["user:ada@example.com", "user:first.last+tag@mail.example.co.uk", "user:u_123", "user:42", "group:data-team", "group:a.b_c"],
  [
    "",
    "ada@example.com",
    "user:",
    "group:",
    "user:ada@",
    "user:@example.com",
    "user:ada@example",
    "user:ada@@example.com",
    "user:ada smith",
    "group:data team",
    "group:a/b",
    "team:x",
    "User:ada@example.com"
  ]
)

describe("parseUserGroupId", () => {
  it("tells the three forms apart", () => {
    assert.deepStrictEqual(Naming.parseUserGroupId("user:Ada@Example.com"), { _tag: "UserEmail", email: "ada@example.com" })
    assert.deepStrictEqual(Naming.parseUserGroupId("user:u_1"), { _tag: "UserId", id: "u_1" })
    assert.deepStrictEqual(Naming.parseUserGroupId("group:eng"), { _tag: "Group", name: "eng" })
    assert.strictEqual(Naming.parseUserGroupId("user:bad@"), undefined)
    assert.strictEqual(Naming.parseUserGroupId("nobody"), undefined)
  })
  it("formats back", () => {
    for (const id of ["user:ada@example.com", "user:u_1", "group:eng"]) {
      const parsed = Naming.parseUserGroupId(id)
      assert.isDefined(parsed)
      if (parsed) assert.strictEqual(Naming.formatUserGroupId(parsed), id)
    }
  })
})
