/**
 * What a published package must be: a set of files with safe relative paths, a
 * `publisher.json` manifest (a JSON object) and at least one `.malloy` model,
 * within size limits. Pure checks; the adapters unpack uploads or read folders.
 */
import { Predicate } from "effect"
import { ValidationError } from "./Errors.ts"
import type { PackageFiles } from "./PackageStore.ts"

/** Size limits of a published package. */
export interface Limits {
  readonly maxFiles: number
  readonly maxTotalBytes: number
}

/** Default limits: 2,000 files, 512 MiB in all. */
export const defaultLimits: Limits = { maxFiles: 2_000, maxTotalBytes: 512 * 1024 * 1024 }

/** The manifest of a package. */
export interface Manifest {
  readonly name: string | undefined
  readonly description: string | undefined
  readonly raw: Readonly<Record<string, unknown>>
}

const unsafePath = (path: string): boolean =>
  path === "" || path.startsWith("/") || path.includes("\\") || path.includes("\u0000") ||
  path.split("/").some((segment) => segment === ".." || segment === "." || segment === "")

/** Checks a package's files; returns its manifest or a VALIDATION_ERROR naming every problem. */
export const validate = (files: PackageFiles, limits: Limits = defaultLimits): ValidationError | Manifest => {
  const problems: Array<string> = []
  if (files.size > limits.maxFiles) problems.push(`has ${files.size} files; at most ${limits.maxFiles} are allowed`)
  let total = 0
  for (const [path, content] of files) {
    total += content.length
    if (unsafePath(path)) problems.push(`file path ${JSON.stringify(path)} must be relative, without '.', '..' or empty segments`)
  }
  if (total > limits.maxTotalBytes) problems.push(`is ${total} bytes; at most ${limits.maxTotalBytes} are allowed`)
  if (![...files.keys()].some((p) => p.endsWith(".malloy"))) problems.push("has no .malloy model file")
  const manifestBytes = files.get("publisher.json")
  let raw: Readonly<Record<string, unknown>> = {}
  if (manifestBytes === undefined) problems.push("has no publisher.json at its root")
  else {
    try {
      const parsed: unknown = JSON.parse(new TextDecoder().decode(manifestBytes))
      if (Predicate.isObject(parsed) && !Array.isArray(parsed)) raw = parsed as Readonly<Record<string, unknown>>
      else problems.push("publisher.json must hold a JSON object")
    } catch {
      problems.push("publisher.json is not valid JSON")
    }
  }
  if (problems.length > 0) return new ValidationError({ message: `Invalid package: it ${problems.join("; it ")}` })
  return {
    name: Predicate.isString(raw["name"]) ? raw["name"] : undefined,
    description: Predicate.isString(raw["description"]) ? raw["description"] : undefined,
    raw
  }
}
