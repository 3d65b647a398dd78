/**
 * The lifecycle of a package version's `archiveStatus`: the moves an update of the
 * version status (PATCH version) may request, and the system event that marks a
 * version whose package cannot be loaded. Pure functions of data; the version
 * service runs them between reading and saving a version.
 */
import { Result, Schema } from "effect"
import * as Errors from "./Errors.ts"

/** The `archiveStatus` of a package version: archive, unarchive or error_state. */
export const ArchiveStatus = Schema.Literals(["archive", "unarchive", "error_state"]).annotate({
  identifier: "ArchiveStatus"
})
/** The `archiveStatus` of a package version. */
export type ArchiveStatus = typeof ArchiveStatus.Type

/** Every archive status, in the order of the specification. */
export const archiveStatuses: ReadonlyArray<ArchiveStatus> = ArchiveStatus.literals

/** The machine name carried by this module's IllegalTransition errors. */
export const machine = "ArchiveStatus"

/** The system event that enters error_state: the package failed to load or compile. */
export const loadFailedEvent = "loadFailed"

const illegal = (from: ArchiveStatus, event: string, why: string): Errors.IllegalTransition =>
  new Errors.IllegalTransition({
    message: `cannot move a version from ${from} on ${event}: ${why}`,
    machine,
    from,
    event
  })

/**
 * The status a version starts with at publish: unarchive when its package loaded
 * and compiled, error_state when it did not (the way error_state is entered).
 */
export const atPublish = (packageLoaded: boolean): ArchiveStatus => packageLoaded ? "unarchive" : "error_state"

/** Whether a version in this status is available to consumers; archiving is what "controls availability". */
export const isAvailable = (status: ArchiveStatus): boolean => status === "unarchive"

/**
 * The status after a PATCH asking for `requested`. Same status is a no-op success
 * (PATCH is idempotent, and a client may send back the version it read); every
 * other move not allowed here fails with IllegalTransition (CONFLICT).
 */
export const transition = (
  current: ArchiveStatus,
  requested: ArchiveStatus
): Result.Result<ArchiveStatus, Errors.IllegalTransition> => {
  // Asking for what is already there changes nothing, error_state included: a
  // client that sends back the version it read must not get a conflict.
  if (current === requested) return Result.succeed(current)
  // error_state is set by the system only (the package failed to load), never by a request.
  if (requested === "error_state") {
    return Result.fail(illegal(current, requested, "error_state is set by the system, not by a request"))
  }
  switch (current) {
    // The spec's two moves: unarchive -> archive and archive -> unarchive.
    case "unarchive":
    case "archive":
      return Result.succeed(requested)
    case "error_state":
      // A broken version may be archived to hide it, but not unarchived: its id is
      // immutable, so its package cannot have been fixed, and it cannot serve.
      return requested === "archive"
        ? Result.succeed(requested)
        : Result.fail(illegal(current, requested, "a version whose package fails to load cannot be made available"))
  }
}

/**
 * The status after the system failed to load or compile the version's package.
 * Only a version the system tries to serve (unarchive) can fail to load; an
 * archived version is not loaded, so the event is illegal there. Repeating it in
 * error_state is a no-op. Unarchiving an archived version that is still broken
 * thus returns it to error_state once the reload fails.
 */
export const loadFailed = (current: ArchiveStatus): Result.Result<ArchiveStatus, Errors.IllegalTransition> =>
  current === "archive"
    ? Result.fail(illegal(current, loadFailedEvent, "an archived version is not loaded"))
    : Result.succeed("error_state")
