/**
 * Materializes the files of a published package version (kept by the `PackageStore` port) into a
 * local folder, because Malloy and DuckDB read models and data from the file system. Versions are
 * immutable, so each version's folder is written once, atomically (a temporary folder renamed into
 * place), and reused by every later load, also by other processes sharing the cache root.
 */
import { PackageStore, SemanticRuntime } from "@modelgate/core"
import { Effect, Predicate } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { mkdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, posix, resolve } from "node:path"

/** The default cache root: `<os tmpdir>/modelgate-packages`. */
export const defaultRoot = (): string => join(tmpdir(), "modelgate-packages")

/** The folder name of a version: a digest of its location, so any location string is a safe name. */
export const folderName = (location: string): string =>
  createHash("sha256").update(location).digest("hex").slice(0, 32)

/** Materializes versions under a cache root. */
export interface PackageCache {
  /** The real (symlink-free) path of the version's folder, written from the store on first use. */
  readonly materialize: (location: string) => Effect.Effect<string, SemanticRuntime.ModelLoadFailed>
}

/** A package cache over the `PackageStore`, rooted at `root` (default {@link defaultRoot}). */
export const make = (options: { readonly root?: string | undefined } = {}): Effect.Effect<PackageCache, never, PackageStore.PackageStore> =>
  Effect.gen(function*() {
    const store = yield* PackageStore.PackageStore
    const root = resolve(options.root ?? defaultRoot())
    const materialize = Effect.fn("PackageCache.materialize")(function*(location: string) {
      const target = join(root, folderName(location))
      if (yield* exists(target)) return yield* realPath(target)
      const files = yield* store.get(location).pipe(
        Effect.mapError((error) => new SemanticRuntime.ModelLoadFailed({ message: error.message }))
      )
      yield* Effect.tryPromise({
        try: () => writeAtomically(root, target, files),
        catch: (cause) => new SemanticRuntime.ModelLoadFailed({ message: `Cannot materialize the package files: ${errorMessage(cause)}` })
      })
      return yield* realPath(target)
    })
    return { materialize }
  })

const exists = (path: string) => Effect.promise(() => stat(path).then(() => true, () => false))

const realPath = (path: string) =>
  Effect.tryPromise({
    try: () => realpath(path),
    catch: (cause) => new SemanticRuntime.ModelLoadFailed({ message: `Cannot open the package folder: ${errorMessage(cause)}` })
  })

/** A relative POSIX path that stays inside its folder; anything else in a package is refused. */
const safeRelative = (path: string): string | undefined => {
  const normalized = posix.normalize(path)
  return normalized === "." || normalized.startsWith("../") || normalized === ".." || posix.isAbsolute(normalized) ||
      normalized.includes("\0")
    ? undefined
    : normalized
}

const writeAtomically = async (root: string, target: string, files: ReadonlyMap<string, Uint8Array>) => {
  await mkdir(root, { recursive: true })
  const temporary = join(root, `.tmp-${randomBytes(8).toString("hex")}`)
  try {
    for (const [path, contents] of files) {
      const relative = safeRelative(path)
      if (relative === undefined) throw new Error(`unsafe file path in package: ${path}`)
      const file = join(temporary, relative)
      await mkdir(dirname(file), { recursive: true })
      await writeFile(file, contents)
    }
    await mkdir(temporary, { recursive: true })
    try {
      await rename(temporary, target)
    } catch (error) {
      // Another writer won the race: its folder holds the same immutable files.
      const code = Predicate.hasProperty(error, "code") ? error.code : undefined
      if (code !== "EEXIST" && code !== "ENOTEMPTY") throw error
    }
  } finally {
    await rm(temporary, { recursive: true, force: true })
  }
}

const errorMessage = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)
