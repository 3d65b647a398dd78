/**
 * The data directory's development secrets: `secret-key` (the key sealing connection
 * secrets on an embedded store) and `jwt-secret` (the HS256 secret of development
 * tokens), each created once, owner-only, and reused by the server and the CLI alike.
 */
import { Effect } from "effect"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"

/** The default data directory (relative to the working directory). */
export const defaultDir = "./.modelgate"

/** The file holding the development secret key (base64 of 32 bytes). */
export const secretKeyFile = "secret-key"

/** The file holding the development JWT secret. */
export const jwtSecretFile = "jwt-secret"

/** `bytes` random bytes in base64. */
export const randomSecret = (bytes: number): string => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))))

/**
 * A value kept in the data directory: read when the file exists, otherwise made,
 * written owner-only and returned. Without a directory (an in-memory store) it is made afresh.
 */
export const persisted = (dataDir: string | undefined, file: string, make: () => string): Effect.Effect<string> =>
  Effect.promise(async () => {
    if (dataDir === undefined) return make()
    await mkdir(dataDir, { recursive: true })
    const path = join(dataDir, file)
    try {
      return (await readFile(path, "utf8")).trim()
    } catch {
      const value = make()
      await writeFile(path, `${value}\n`, { mode: 0o600 })
      await chmod(path, 0o600)
      return value
    }
  })

/** A value of the data directory that must exist already: `undefined` when the file is missing or empty. */
export const existing = (dataDir: string, file: string): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    try {
      const value = (await readFile(join(dataDir, file), "utf8")).trim()
      return value === "" ? undefined : value
    } catch {
      return undefined
    }
  })

/** The development keyring spec of an embedded store: its `secret-key`, created once, as the current key `dev`. */
export const developmentSecretKeys = (dataDir: string | undefined): Effect.Effect<string> =>
  Effect.map(persisted(dataDir, secretKeyFile, () => randomSecret(32)), (key) => `*dev=${key}`)
