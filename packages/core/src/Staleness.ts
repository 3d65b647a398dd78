/**
 * Staleness of a package version: each artifact it serves (a materialized source
 * or an index) is evaluated against its freshness window and build state, and the
 * version's display-only `stale`, `staleSince` and `staleReasons` roll those up.
 * Pure functions of data and a `now`; the Effect variant reads the Clock.
 */
import { DateTime, Effect, Schema } from "effect"

/** Why an artifact is stale: two gating reasons, three annotations. */
export const StaleReason = Schema.Literals([
  "FRESHNESS_WINDOW_EXCEEDED",
  "SOURCE_BUILD_FAILED",
  "REFRESH_IN_PROGRESS",
  "LAST_REFRESH_FAILED",
  "WINDOW_BELOW_BUILD_TIME"
]).annotate({ identifier: "StaleReason" })
/** Why an artifact is stale. */
export type StaleReason = typeof StaleReason.Type

/** Every stale reason, in the order of the specification (the order `staleReasons` is listed in). */
export const staleReasons: ReadonlyArray<StaleReason> = StaleReason.literals

/** The reasons that make an artifact stale on their own. */
export const gatingReasons: ReadonlyArray<StaleReason> = ["FRESHNESS_WINDOW_EXCEEDED", "SOURCE_BUILD_FAILED"]

/** The reasons that only explain why an already-stale artifact keeps aging. */
export const annotationReasons: ReadonlyArray<StaleReason> = [
  "REFRESH_IN_PROGRESS",
  "LAST_REFRESH_FAILED",
  "WINDOW_BELOW_BUILD_TIME"
]

/** Whether a reason is gating (sets stale) rather than an annotation. */
export const isGating = (reason: StaleReason): boolean => gatingReasons.includes(reason)

/** `materializationFreshnessFallback`: query-time behavior when the window is missed, reported verbatim. */
export const FreshnessFallback = Schema.Literals(["live", "stale_ok", "fail"]).annotate({
  identifier: "FreshnessFallback"
})
/** `materializationFreshnessFallback`. */
export type FreshnessFallback = typeof FreshnessFallback.Type

/**
 * The effective freshness window of an artifact: the first declared window of a
 * list ordered most specific first, ending with the package default ("most
 * specific wins"); null when none is declared.
 */
export const effectiveWindowSeconds = (mostSpecificFirst: ReadonlyArray<number | null | undefined>): number | null => {
  for (const window of mostSpecificFirst) if (window !== null && window !== undefined) return window
  return null
}

/** What the evaluation needs to know of one served artifact. */
export interface Artifact {
  /** When the data of the generation being served was current; null if nothing was ever built. */
  readonly dataAsOf: DateTime.Utc | null
  /** The effective freshness window (see {@link effectiveWindowSeconds}); null when none is declared. */
  readonly freshnessWindowSeconds: number | null
  /** Prior values are served because this version's build of the artifact failed. */
  readonly buildFailed: boolean
  /** A scheduled refresh fired and no fresher generation has landed yet. */
  readonly refreshInProgress: boolean
  /** The refresh stream was disarmed after repeated fires without a fresher generation. */
  readonly refreshDisarmed: boolean
  /** The estimated duration of one build; null when unknown. */
  readonly estimatedBuildSeconds: number | null
}

/** The staleness of one artifact. */
export interface ArtifactStaleness {
  readonly stale: boolean
  /** The fresh-to-stale crossover (dataAsOf + window) when stale by age; otherwise null. */
  readonly staleSince: DateTime.Utc | null
  /** Its reasons in spec order; empty when fresh. */
  readonly reasons: ReadonlyArray<StaleReason>
}

/** A version's `stale`, `staleSince` and `staleReasons`. */
export interface VersionStaleness {
  readonly stale: boolean
  readonly staleSince: DateTime.Utc | null
  readonly staleReasons: ReadonlyArray<StaleReason>
}

const inSpecOrder = (reasons: ReadonlySet<StaleReason>): ReadonlyArray<StaleReason> =>
  staleReasons.filter((reason) => reasons.has(reason))

/** The instant an artifact's data ages past its window; null without data or window. */
export const crossover = (artifact: Artifact): DateTime.Utc | null =>
  artifact.dataAsOf === null || artifact.freshnessWindowSeconds === null
    ? null
    : DateTime.add(artifact.dataAsOf, { seconds: artifact.freshnessWindowSeconds })

/**
 * Evaluates one artifact at `now`. Stale only by a gating reason: its data age
 * passed the window (strictly after the crossover), or its build failed so prior
 * values are served. Annotations are attached only to a stale artifact.
 */
export const evaluateArtifact = (artifact: Artifact, now: DateTime.Utc): ArtifactStaleness => {
  const reasons = new Set<StaleReason>()
  const crossesAt = crossover(artifact)
  // Gating: "data age passed the declared freshness window".
  const aged = crossesAt !== null && DateTime.isGreaterThan(now, crossesAt)
  if (aged) reasons.add("FRESHNESS_WINDOW_EXCEEDED")
  // Gating: "prior values are served because this version's source materialization failed".
  if (artifact.buildFailed) reasons.add("SOURCE_BUILD_FAILED")
  // Annotations only explain why an already-stale artifact keeps aging; a fresh
  // artifact has no reasons at all.
  if (reasons.size === 0) return { stale: false, staleSince: null, reasons: [] }
  // A disarmed refresh stream has no refresh in flight, so it does not also
  // claim one in progress.
  if (artifact.refreshDisarmed) reasons.add("LAST_REFRESH_FAILED")
  else if (artifact.refreshInProgress) reasons.add("REFRESH_IN_PROGRESS")
  // "The declared window is shorter than the estimated build duration."
  if (
    artifact.freshnessWindowSeconds !== null && artifact.estimatedBuildSeconds !== null &&
    artifact.freshnessWindowSeconds < artifact.estimatedBuildSeconds
  ) reasons.add("WINDOW_BELOW_BUILD_TIME")
  return {
    stale: true,
    // The crossover exists only for age-based staleness; a failed build alone has none.
    staleSince: aged ? crossesAt : null,
    reasons: inSpecOrder(reasons)
  }
}

/**
 * Rolls artifact evaluations up to the version: stale is the OR of the
 * artifacts' gating reasons; staleSince the earliest crossover across stale artifacts (null when
 * none is age-based or the version is fresh); staleReasons the union, empty when
 * fresh.
 */
export const rollUp = (artifacts: ReadonlyArray<ArtifactStaleness>): VersionStaleness => {
  let staleSince: DateTime.Utc | null = null
  const reasons = new Set<StaleReason>()
  let stale = false
  for (const artifact of artifacts) {
    // "Gating reasons set stale=true; annotation reasons only explain": an
    // artifact counts only through a gating reason, whatever else it carries.
    if (!artifact.reasons.some(isGating)) continue
    stale = true
    for (const reason of artifact.reasons) reasons.add(reason)
    if (artifact.staleSince !== null) {
      staleSince = staleSince === null ? artifact.staleSince : DateTime.min(staleSince, artifact.staleSince)
    }
  }
  return { stale, staleSince, staleReasons: inSpecOrder(reasons) }
}

/** Evaluates every artifact of a version at `now` and rolls them up. */
export const evaluateVersion = (artifacts: ReadonlyArray<Artifact>, now: DateTime.Utc): VersionStaleness =>
  rollUp(artifacts.map((artifact) => evaluateArtifact(artifact, now)))

/** {@link evaluateVersion} at the current time of the Clock. */
export const evaluateVersionNow = (artifacts: ReadonlyArray<Artifact>): Effect.Effect<VersionStaleness> =>
  Effect.map(DateTime.now, (now) => evaluateVersion(artifacts, now))
