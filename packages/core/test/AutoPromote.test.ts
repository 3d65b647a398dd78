import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import type { ArchiveStatus } from "../src/ArchiveStatus.ts"
import type { BuildStatus } from "../src/BuildStatus.ts"
import { AutoPromote, Errors } from "@modelgate/core"

type Version = AutoPromote.VersionState
type Pkg = AutoPromote.PackageVersions

const at = (iso: string) => DateTime.makeUnsafe(iso)
const t1 = at("2025-01-01T00:00:00Z")
const t2 = at("2025-02-01T00:00:00Z")
const now = at("2025-03-01T00:00:00Z")

const version = (id: string, overrides: Partial<Version> = {}): Version => ({
  id,
  promoteWhenReady: false,
  promotedAt: null,
  demotedAt: null,
  buildStatus: "BUILDING",
  archiveStatus: "unarchive",
  ...overrides
})

// 1.0.0 is latest since t1; 1.1.0 was just published.
const base: Pkg = {
  latestId: "1.0.0",
  versions: [version("1.0.0", { promotedAt: t1, buildStatus: "READY" }), version("1.1.0")]
}

const find = (pkg: Pkg, id: string): Version => {
  const found = pkg.versions.find((v) => v.id === id)
  assert.isDefined(found, `version ${id}`)
  return found ?? version(id)
}

const withVersion = (pkg: Pkg, id: string, overrides: Partial<Version>): Pkg => ({
  latestId: pkg.latestId,
  versions: pkg.versions.map((v) => v.id === id ? { ...v, ...overrides } : v)
})

const ok = <A, E>(result: Result.Result<A, E>): A => {
  assert.isTrue(Result.isSuccess(result), "expected success")
  return Result.getOrThrow(result)
}

describe("AutoPromote.armAtPublish", () => {
  it("arms the new version when the policy is enabled", () => {
    const armed = ok(AutoPromote.armAtPublish(true, base, "1.1.0"))
    assert.isTrue(find(armed, "1.1.0").promoteWhenReady)
    assert.strictEqual(AutoPromote.armed(armed)?.id, "1.1.0")
  })

  it("arming disarms any other version: at most one armed per package", () => {
    const pkg: Pkg = { ...base, versions: [...base.versions, version("1.2.0")] }
    const first = ok(AutoPromote.armAtPublish(true, pkg, "1.1.0"))
    const second = ok(AutoPromote.armAtPublish(true, first, "1.2.0"))
    assert.isFalse(find(second, "1.1.0").promoteWhenReady)
    assert.isTrue(find(second, "1.2.0").promoteWhenReady)
  })

  it("does nothing with the policy disabled, leaving an earlier intent armed", () => {
    const pkg: Pkg = withVersion({ ...base, versions: [...base.versions, version("1.2.0")] }, "1.1.0", {
      promoteWhenReady: true
    })
    assert.deepStrictEqual(AutoPromote.armAtPublish(false, pkg, "1.2.0"), Result.succeed(pkg))
  })

  it("fails with ResourceNotFound for an unknown version", () => {
    const result = AutoPromote.armAtPublish(true, base, "9.9.9")
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.instanceOf(result.failure, Errors.ResourceNotFound)
  })
})

describe("AutoPromote.reconcile", () => {
  const armedWith = (buildStatus: BuildStatus, archiveStatus: ArchiveStatus = "unarchive") =>
    withVersion(base, "1.1.0", { promoteWhenReady: true, buildStatus, archiveStatus })

  it.each(["READY", "UNSUPPORTED"] as const)("promotes an armed %s version that was never latest", (buildStatus) => {
    const next = AutoPromote.reconcile(armedWith(buildStatus), now)
    assert.strictEqual(next.latestId, "1.1.0")
    assert.deepStrictEqual(find(next, "1.1.0"), version("1.1.0", { buildStatus, promotedAt: now }))
    // The previous latest is demoted now; auto-archive's time-to-live runs from here.
    assert.deepStrictEqual(find(next, "1.0.0"), version("1.0.0", { buildStatus: "READY", promotedAt: t1, demotedAt: now }))
  })

  it("keeps a BUILDING version armed and changes nothing", () =>
    assert.deepStrictEqual(AutoPromote.reconcile(armedWith("BUILDING"), now), armedWith("BUILDING")))

  it("clears the intent on terminal failure (FAILED) without promoting", () =>
    assert.deepStrictEqual(
      AutoPromote.reconcile(armedWith("FAILED"), now),
      withVersion(base, "1.1.0", { buildStatus: "FAILED" })
    ))

  it.each(["archive", "error_state"] as const)("disarms an armed version in %s without promoting", (archiveStatus) =>
    assert.deepStrictEqual(
      AutoPromote.reconcile(armedWith("READY", archiveStatus), now),
      withVersion(base, "1.1.0", { buildStatus: "READY", archiveStatus })
    ))

  it("never promotes a version that has been latest before; it is disarmed instead", () => {
    // 1.1.0 was latest once (promoted t1, demoted t2); 1.2.0 is latest now.
    const pkg: Pkg = {
      latestId: "1.2.0",
      versions: [
        version("1.1.0", { promoteWhenReady: true, buildStatus: "READY", promotedAt: t1, demotedAt: t2 }),
        version("1.2.0", { buildStatus: "READY", promotedAt: t2 })
      ]
    }
    assert.deepStrictEqual(AutoPromote.reconcile(pkg, now), withVersion(pkg, "1.1.0", { promoteWhenReady: false }))
  })

  it("promotes the first version of a package, demoting nobody", () => {
    const pkg: Pkg = { latestId: null, versions: [version("0.1.0", { promoteWhenReady: true, buildStatus: "READY" })] }
    assert.deepStrictEqual(AutoPromote.reconcile(pkg, now), {
      latestId: "0.1.0",
      versions: [version("0.1.0", { buildStatus: "READY", promotedAt: now })]
    })
  })

  it("a second pass promotes nothing again", () => {
    const once = AutoPromote.reconcile(armedWith("READY"), now)
    assert.deepStrictEqual(AutoPromote.reconcile(once, at("2025-04-01T00:00:00Z")), once)
  })

  it("changes nothing when no version is armed", () =>
    assert.deepStrictEqual(AutoPromote.reconcile(withVersion(base, "1.1.0", { buildStatus: "READY" }), now), withVersion(base, "1.1.0", { buildStatus: "READY" })))
})

describe("AutoPromote.promote (manual)", () => {
  it("makes a version latest and demotes the previous one", () => {
    const next = ok(AutoPromote.promote(base, "1.1.0", now))
    assert.strictEqual(next.latestId, "1.1.0")
    assert.deepStrictEqual(find(next, "1.1.0").promotedAt, now)
    assert.deepStrictEqual(find(next, "1.0.0").demotedAt, now)
  })

  it("promoting the current latest is a no-op", () =>
    assert.deepStrictEqual(AutoPromote.promote(base, "1.0.0", now), Result.succeed(base)))

  it("a rollback re-promotes a demoted version: new promotedAt, demotedAt cleared", () => {
    const rolledForward = ok(AutoPromote.promote(base, "1.1.0", t2))
    const rolledBack = ok(AutoPromote.promote(rolledForward, "1.0.0", now))
    assert.strictEqual(rolledBack.latestId, "1.0.0")
    assert.deepStrictEqual(find(rolledBack, "1.0.0"), version("1.0.0", { buildStatus: "READY", promotedAt: now }))
    assert.deepStrictEqual(find(rolledBack, "1.1.0").demotedAt, now)
  })

  it("promoting the armed version resolves its intent", () => {
    const next = ok(AutoPromote.promote(withVersion(base, "1.1.0", { promoteWhenReady: true }), "1.1.0", now))
    assert.isFalse(find(next, "1.1.0").promoteWhenReady)
  })

  it("promoting another version leaves the armed one armed", () => {
    const pkg: Pkg = { ...base, versions: [...base.versions, version("1.2.0", { promoteWhenReady: true })] }
    const next = ok(AutoPromote.promote(pkg, "1.1.0", now))
    assert.isTrue(find(next, "1.2.0").promoteWhenReady)
  })

  it.each(["archive", "error_state"] as const)("refuses a version in %s with IllegalTransition", (archiveStatus) => {
    const result = AutoPromote.promote(withVersion(base, "1.1.0", { archiveStatus }), "1.1.0", now)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.instanceOf(result.failure, Errors.IllegalTransition)
      assert.strictEqual(result.failure.code, "CONFLICT")
    }
  })

  it("fails with ResourceNotFound for an unknown version", () => {
    const result = AutoPromote.promote(base, "9.9.9", now)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.instanceOf(result.failure, Errors.ResourceNotFound)
  })
})

describe("AutoPromote.dueForArchive", () => {
  const day = 86_400
  const demoted = at("2025-02-27T00:00:00Z")
  const pkg: Pkg = {
    latestId: "2.0.0",
    versions: [
      version("1.0.0", { buildStatus: "READY", promotedAt: t1, demotedAt: demoted }),
      version("1.1.0", { buildStatus: "READY", promotedAt: t1, demotedAt: demoted, archiveStatus: "archive" }),
      version("1.2.0", { buildStatus: "FAILED", promotedAt: t1, demotedAt: demoted, archiveStatus: "error_state" }),
      version("1.3.0", { buildStatus: "READY" }),
      version("1.4.0", { buildStatus: "READY", promotedAt: t1, demotedAt: at("2025-02-28T12:00:00Z") }),
      version("2.0.0", { buildStatus: "READY", promotedAt: demoted })
    ]
  }

  it("lists demoted, non-latest, unarchived versions whose time-to-live has passed", () =>
    assert.deepStrictEqual(AutoPromote.dueForArchive(pkg, day, now), ["1.0.0"]))

  it("is due exactly when demotedAt + ttl is reached, not a second before", () => {
    assert.deepStrictEqual(AutoPromote.dueForArchive(pkg, 2 * day, now), ["1.0.0"])
    assert.deepStrictEqual(AutoPromote.dueForArchive(pkg, 2 * day + 1, now), [])
  })

  it("never lists the latest version, even with stale timestamps", () => {
    const odd: Pkg = { latestId: "1.0.0", versions: [version("1.0.0", { promotedAt: t1, demotedAt: t1 })] }
    assert.deepStrictEqual(AutoPromote.dueForArchive(odd, 0, now), [])
  })
})

describe("AutoPromote with the Clock", () => {
  it.effect("reconcileNow, promoteNow and dueForArchiveNow use the TestClock's time", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(now))
      const promoted = yield* AutoPromote.reconcileNow(withVersion(base, "1.1.0", { promoteWhenReady: true, buildStatus: "READY" }))
      assert.deepStrictEqual(find(promoted, "1.1.0").promotedAt, now)
      assert.deepStrictEqual(yield* AutoPromote.dueForArchiveNow(promoted, 3600), [])
      yield* TestClock.adjust("1 hour")
      assert.deepStrictEqual(yield* AutoPromote.dueForArchiveNow(promoted, 3600), ["1.0.0"])
      const back = yield* AutoPromote.promoteNow(promoted, "1.0.0")
      assert.deepStrictEqual(find(back, "1.0.0").promotedAt, at("2025-03-01T01:00:00Z"))
      const error = yield* AutoPromote.promoteNow(promoted, "nope").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ResourceNotFound")
    }))
})

// Property tests: random sequences of publishes, build and archive changes,
// reconciler passes and manual promotions keep the invariants.
type Op =
  | { readonly _tag: "publish"; readonly policy: boolean }
  | { readonly _tag: "build"; readonly index: number; readonly status: BuildStatus }
  | { readonly _tag: "archive"; readonly index: number; readonly status: ArchiveStatus }
  | { readonly _tag: "reconcile"; readonly advance: number }
  | { readonly _tag: "promote"; readonly index: number; readonly advance: number }

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("publish" as const), policy: fc.boolean() }),
  fc.record({
    _tag: fc.constant("build" as const),
    index: fc.nat(20),
    status: fc.constantFrom<BuildStatus>("BUILDING", "READY", "FAILED", "UNSUPPORTED")
  }),
  fc.record({
    _tag: fc.constant("archive" as const),
    index: fc.nat(20),
    status: fc.constantFrom<ArchiveStatus>("archive", "unarchive", "error_state")
  }),
  fc.record({ _tag: fc.constant("reconcile" as const), advance: fc.integer({ min: 1, max: 10_000 }) }),
  fc.record({ _tag: fc.constant("promote" as const), index: fc.nat(20), advance: fc.integer({ min: 1, max: 10_000 }) })
)

const assertInvariants = (pkg: Pkg) => {
  // Never two armed.
  assert.isAtMost(pkg.versions.filter((v) => v.promoteWhenReady).length, 1)
  // At most one latest: the pointer names an existing version, which is the only
  // one "currently latest" by its timestamps.
  const current = pkg.versions.filter((v) => v.promotedAt !== null && v.demotedAt === null)
  assert.isAtMost(current.length, 1)
  if (pkg.latestId === null) {
    assert.strictEqual(current.length, 0)
  } else {
    assert.deepStrictEqual(current.map((v) => v.id), [pkg.latestId])
  }
  // The latest version is never still armed (its intent resolved).
  assert.isFalse(current.some((v) => v.promoteWhenReady))
}

describe("AutoPromote invariants (fast-check)", () => {
  it("never two armed, never auto-promoted twice, at most one latest", () =>
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 60 }), (ops) => {
        let pkg: Pkg = { latestId: null, versions: [] }
        let clock = DateTime.toEpochMillis(t1)
        const autoPromoted = new Set<string>()
        for (const op of ops) {
          const target = (index: number): Version | undefined => pkg.versions[index % Math.max(pkg.versions.length, 1)]
          switch (op._tag) {
            case "publish": {
              const id = `1.0.${pkg.versions.length}`
              pkg = ok(AutoPromote.armAtPublish(op.policy, { ...pkg, versions: [...pkg.versions, version(id)] }, id))
              if (op.policy) assert.strictEqual(AutoPromote.armed(pkg)?.id, id)
              break
            }
            case "build":
            case "archive": {
              const v = target(op.index)
              if (v !== undefined) {
                pkg = withVersion(pkg, v.id, op._tag === "build" ? { buildStatus: op.status } : { archiveStatus: op.status })
              }
              break
            }
            case "reconcile": {
              clock += op.advance
              const before = pkg
              const armedBefore = AutoPromote.armed(before)
              pkg = AutoPromote.reconcile(before, DateTime.makeUnsafe(clock))
              for (const after of pkg.versions) {
                const prior = find(before, after.id)
                if (after.promotedAt === prior.promotedAt) continue
                // Only the armed, never-latest, available and servable version is promoted,
                // and never twice over the whole run.
                assert.strictEqual(after.id, armedBefore?.id)
                assert.isNull(prior.promotedAt)
                assert.strictEqual(prior.archiveStatus, "unarchive")
                assert.include(["READY", "UNSUPPORTED"], prior.buildStatus)
                assert.isFalse(autoPromoted.has(after.id))
                autoPromoted.add(after.id)
              }
              // After a pass the armed version, if any, is still building and never latest.
              const armedAfter = AutoPromote.armed(pkg)
              if (armedAfter !== undefined) {
                assert.strictEqual(armedAfter.buildStatus, "BUILDING")
                assert.isNull(armedAfter.promotedAt)
              }
              break
            }
            case "promote": {
              clock += op.advance
              const v = target(op.index)
              if (v !== undefined) {
                const result = AutoPromote.promote(pkg, v.id, DateTime.makeUnsafe(clock))
                assert.strictEqual(Result.isSuccess(result), v.archiveStatus === "unarchive" || pkg.latestId === v.id)
                if (Result.isSuccess(result)) pkg = result.success
              }
              break
            }
          }
          assertInvariants(pkg)
        }
      }),
      { numRuns: 300 }
    ))
})
