/**
 * The demo packages (ecommerce, flights) and the held-out ones (saas, hospital, insurance, `test/heldout`)
 * loaded for real: an in-memory package store seeded with their files, the Malloy runtime over it,
 * and the retrieval service with the offline word vectors. Shared by the tests that search them.
 */
import { ConnectionRepo, PackageStore, SemanticRuntime } from "@modelgate/core"
import { Runtime } from "@modelgate/malloy"
import { Effect, Layer } from "effect"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, sep } from "node:path"
import * as Retrieval from "../src/Retrieval.ts"
import * as Semantic from "../src/Semantic.ts"
import * as WordVectors from "../src/WordVectors.ts"

const fixtures = join(import.meta.dirname, "../../../examples/server/demo/packages")
const heldout = join(import.meta.dirname, "heldout")

/** The files of a demo or held-out package, by path in the package. */
export const readPackage = (name: string): PackageStore.PackageFiles => {
  const root = join((heldoutPackages as ReadonlyArray<string>).includes(name) ? heldout : fixtures, name)
  const files = new Map<string, Uint8Array>()
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(root, path).split(sep).join("/"), readFileSync(path))
  }
  return files
}

/** The version location of a demo package. */
export const version = (pkg: string): SemanticRuntime.VersionLocation => ({
  organization: "acme",
  environment: "demo",
  package: pkg,
  version: "1.0.0",
  location: `acme/demo/${pkg}/1.0.0`
})

/** The demo packages by name. */
export const packages = ["ecommerce", "flights"] as const

/** The held-out packages by name (`test/heldout`), searched together with the demo ones. */
export const heldoutPackages = ["saas", "hospital", "insurance"] as const

/** Search targets of the project (the demo packages, or `among` others), or of one package. */
export const targets = (pkg?: string | null, among: ReadonlyArray<string> = packages): Array<Retrieval.Target> =>
  among.filter((p) => pkg === undefined || pkg === null || p === pkg).map((p) => ({
    project: "demo",
    package: p,
    version: version(p)
  }))

const seeded = Layer.effectDiscard(Effect.gen(function*() {
  const store = yield* PackageStore.PackageStore
  for (const p of [...packages, ...heldoutPackages]) yield* store.put(version(p).location, readPackage(p))
}))

/** The runtime over the seeded store. */
export const RuntimeLayer = Layer.mergeAll(
  Runtime.layer({ cacheDir: mkdtempSync(join(tmpdir(), "modelgate-retrieval-test-")), queryTimeoutMillis: 30_000 }),
  seeded
).pipe(Layer.provideMerge(Layer.merge(PackageStore.PackageStore.layerMemory, ConnectionRepo.ConnectionRepo.layerMemory)))

/** The retrieval service with the offline word vectors, over the real runtime. */
export const RetrievalLayer = Retrieval.layer({ vectors: WordVectors.load().pipe(Effect.map((table) => Semantic.fromTable(table)), Effect.orElseSucceed(() => undefined)) }).pipe(
  Layer.provideMerge(RuntimeLayer)
)
