/**
 * Auto-promote and the package's latest version: arming a version at publish,
 * the reconciler that promotes the armed version once it is servable, manual
 * promotion, and the versions due for auto-archive. Operates on a package's
 * versions as plain data with one package-level latest pointer, so "one latest
 * per package" holds by construction.
 */
import { DateTime, Effect, Result } from "effect"
import type { ArchiveStatus } from "./ArchiveStatus.ts"
import * as BuildStatus from "./BuildStatus.ts"
import * as Errors from "./Errors.ts"

/** The promotion-relevant fields of one package version. */
export interface VersionState {
  readonly id: string
  /** Armed for auto-promote (read-only, system-set). */
  readonly promoteWhenReady: boolean
  /** When it most recently became latest; null if never. */
  readonly promotedAt: DateTime.Utc | null
  /** When it most recently stopped being latest; null while latest or never latest. */
  readonly demotedAt: DateTime.Utc | null
  readonly buildStatus: BuildStatus.BuildStatus
  readonly archiveStatus: ArchiveStatus
}

/** A package's versions and its latest-version pointer (null before the first promotion). */
export interface PackageVersions {
  readonly latestId: string | null
  readonly versions: ReadonlyArray<VersionState>
}

/** The machine name carried by this module's IllegalTransition errors. */
export const machine = "LatestVersion"

const notFound = (id: string): Errors.ResourceNotFound =>
  new Errors.ResourceNotFound({ message: `package version ${id} not found` })

const update = (
  pkg: PackageVersions,
  f: (version: VersionState) => VersionState
): ReadonlyArray<VersionState> => pkg.versions.map(f)

/** The version the latest pointer names, if any. */
export const latest = (pkg: PackageVersions): VersionState | undefined =>
  pkg.latestId === null ? undefined : pkg.versions.find((version) => version.id === pkg.latestId)

/** The armed version, if any (at most one per package). */
export const armed = (pkg: PackageVersions): VersionState | undefined =>
  pkg.versions.find((version) => version.promoteWhenReady)

/** Whether a version has ever been the package's latest. */
export const wasEverLatest = (pkg: PackageVersions, version: VersionState): boolean =>
  version.promotedAt !== null || pkg.latestId === version.id

/**
 * Arms the newly published version when the package's auto-promote policy is
 * enabled. At most one version per package is armed, so arming disarms any other
 * (the newer publish supersedes the older intent). With the policy disabled
 * nothing changes: an earlier intent only resolves by promotion or failure.
 */
export const armAtPublish = (
  policyEnabled: boolean,
  pkg: PackageVersions,
  newId: string
): Result.Result<PackageVersions, Errors.ResourceNotFound> => {
  if (!pkg.versions.some((version) => version.id === newId)) return Result.fail(notFound(newId))
  if (!policyEnabled) return Result.succeed(pkg)
  return Result.succeed({
    latestId: pkg.latestId,
    versions: update(pkg, (version) => {
      const promoteWhenReady = version.id === newId
      return version.promoteWhenReady === promoteWhenReady ? version : { ...version, promoteWhenReady }
    })
  })
}

// Makes `id` the latest at `now`: it gets promotedAt (and loses demotedAt and any
// pending intent, which this resolves); the previous latest gets demotedAt, from
// which the auto-archive time-to-live is measured.
const makeLatest = (pkg: PackageVersions, id: string, now: DateTime.Utc): PackageVersions => ({
  latestId: id,
  versions: update(pkg, (version) => {
    if (version.id === id) return { ...version, promotedAt: now, demotedAt: null, promoteWhenReady: false }
    if (version.id === pkg.latestId) return { ...version, demotedAt: now }
    return version
  })
})

/**
 * Promotes a version to latest by hand. Promoting the current latest is a no-op.
 * Only an available (unarchive) version can become latest; any build status is
 * the caller's choice. Another armed version stays armed.
 */
export const promote = (
  pkg: PackageVersions,
  id: string,
  now: DateTime.Utc
): Result.Result<PackageVersions, Errors.ResourceNotFound | Errors.IllegalTransition> => {
  const target = pkg.versions.find((version) => version.id === id)
  if (target === undefined) return Result.fail(notFound(id))
  if (pkg.latestId === id) return Result.succeed(pkg)
  // An archived or broken version is not available, so it cannot be what the
  // package serves by default.
  if (target.archiveStatus !== "unarchive") {
    return Result.fail(
      new Errors.IllegalTransition({
        message: `version ${id} is ${target.archiveStatus} and cannot become the latest version`,
        machine,
        from: target.archiveStatus,
        event: "promote"
      })
    )
  }
  return Result.succeed(makeLatest(pkg, id, now))
}

// Resolves the intent of one armed version, or leaves it armed while it builds.
const settle = (pkg: PackageVersions, version: VersionState, now: DateTime.Utc): PackageVersions => {
  const disarm = (): PackageVersions => ({
    latestId: pkg.latestId,
    versions: update(pkg, (v) => v.id === version.id ? { ...v, promoteWhenReady: false } : v)
  })
  // "Only if it has never been latest": a version is auto-promoted at most once.
  if (wasEverLatest(pkg, version)) return disarm()
  // An archived or broken version must not become latest by itself.
  if (version.archiveStatus !== "unarchive") return disarm()
  // Cleared on terminal failure: the version will never be ready.
  if (version.buildStatus === "FAILED") return disarm()
  // Ready: fully indexed and settled in a servable resting state (READY or UNSUPPORTED).
  if (BuildStatus.isServable(version.buildStatus)) return makeLatest(pkg, version.id, now)
  // Still BUILDING: stays armed.
  return pkg
}

/**
 * One reconciler pass at `now` over the armed version: promote it once it is
 * servable (READY or UNSUPPORTED) and has never been latest; disarm it when the
 * intent can no longer resolve (FAILED build, ever latest, archived or broken);
 * otherwise (BUILDING) leave it armed.
 */
export const reconcile = (pkg: PackageVersions, now: DateTime.Utc): PackageVersions => {
  let next = pkg
  for (const { id } of pkg.versions) {
    const version = next.versions.find((v) => v.id === id)
    if (version !== undefined && version.promoteWhenReady) next = settle(next, version, now)
  }
  return next
}

/**
 * The versions auto-archive should archive at `now`: demoted, not latest, still
 * unarchive, and whose demotedAt + ttl is reached. error_state versions are left alone.
 */
export const dueForArchive = (
  pkg: PackageVersions,
  ttlSeconds: number,
  now: DateTime.Utc
): ReadonlyArray<string> =>
  pkg.versions
    .filter((version) =>
      version.id !== pkg.latestId &&
      version.archiveStatus === "unarchive" &&
      version.demotedAt !== null &&
      // The time-to-live is measured from demotedAt; due once it has fully elapsed.
      DateTime.isGreaterThanOrEqualTo(now, DateTime.add(version.demotedAt, { seconds: ttlSeconds }))
    )
    .map((version) => version.id)

/** {@link reconcile} at the current time of the Clock. */
export const reconcileNow = (pkg: PackageVersions): Effect.Effect<PackageVersions> =>
  Effect.map(DateTime.now, (now) => reconcile(pkg, now))

/** {@link promote} at the current time of the Clock. */
export const promoteNow = (
  pkg: PackageVersions,
  id: string
): Effect.Effect<PackageVersions, Errors.ResourceNotFound | Errors.IllegalTransition> =>
  Effect.flatMap(DateTime.now, (now) => Effect.fromResult(promote(pkg, id, now)))

/** {@link dueForArchive} at the current time of the Clock. */
export const dueForArchiveNow = (pkg: PackageVersions, ttlSeconds: number): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(DateTime.now, (now) => dueForArchive(pkg, ttlSeconds, now))
