/**
 * The port that keeps the files of published package versions (the model files,
 * `publisher.json`, data files), addressed by the version's location. Versions are
 * immutable, so files are written once and read many times.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { ResourceNotFound } from "./Errors.ts"

/** A package's files: relative POSIX paths to contents. */
export type PackageFiles = ReadonlyMap<string, Uint8Array>

/** Storage of package files. */
export class PackageStore extends Context.Service<PackageStore, {
  /** Stores the files of a new version at `location` (replacing any partial earlier attempt). */
  readonly put: (location: string, files: PackageFiles) => Effect.Effect<void>
  readonly get: (location: string) => Effect.Effect<PackageFiles, ResourceNotFound>
}>()("@modelgate/core/PackageStore") {
  /** An in-memory store. */
  static readonly layerMemory = Layer.effect(
    PackageStore,
    Effect.map(Ref.make(new Map<string, PackageFiles>()), (ref) =>
      PackageStore.of({
        put: (location, files) => Ref.update(ref, (all) => new Map(all).set(location, new Map(files))),
        get: (location) =>
          Effect.flatMap(Ref.get(ref), (all) => {
            const files = all.get(location)
            return files === undefined
              ? Effect.fail(new ResourceNotFound({ message: `Package files at ${location} not found` }))
              : Effect.succeed(files)
          })
      }))
  )
}
