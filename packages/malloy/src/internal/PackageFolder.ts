/**
 * A version's local folder as both the runtime and the materializer open it: its model files, and
 * the settings of the DuckDB connection sandboxed to it (no files outside the folder, no network,
 * no extension downloads, configuration locked).
 */
import { readdir } from "node:fs/promises"
import { join, posix, sep } from "node:path"

/** The package's own connection's name: a version's sandboxed DuckDB. */
export const connectionName = "duckdb"

/** The folder's `.malloy` files, as POSIX paths relative to it, sorted. */
export const modelFiles = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".malloy"))
    .map((entry) => posix.join(...join(entry.parentPath, entry.name).slice(dir.length + 1).split(sep)))
    .filter((path) => !path.startsWith("."))
    .sort()
}

/** The options of a DuckDB connection sandboxed to the folder. */
export const sandboxed = (dir: string) => ({
  name: connectionName,
  workingDirectory: dir,
  securityPolicy: "sandboxed" as const,
  allowedDirectories: [dir],
  enableExternalAccess: false,
  lockConfiguration: true,
  autoloadKnownExtensions: false,
  autoinstallKnownExtensions: false,
  allowCommunityExtensions: false,
  allowUnsignedExtensions: false
})
