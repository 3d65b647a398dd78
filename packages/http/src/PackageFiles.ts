/**
 * Package files in and out of their transport forms: a `.tar.gz` upload (gunzip
 * with an output cap, then a small ustar reader that keeps regular files only)
 * and a folder on disk (for the seed and the CLI). Limits guard memory; paths are
 * checked again by core's publish rules.
 */
import { Effect } from "effect"
import { readdir, readFile } from "node:fs/promises"
import { join, relative, sep } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { Errors, type PackageStore, PackagePublish } from "@modelgate/core"

const invalid = (message: string) => new Errors.ValidationError({ message: `Invalid package archive: ${message}` })

const text = (bytes: Uint8Array, from: number, length: number) => {
  const slice = bytes.subarray(from, from + length)
  const end = slice.indexOf(0)
  return new TextDecoder().decode(end < 0 ? slice : slice.subarray(0, end))
}

/** Reads a gzipped tar archive into package files (regular files only; one leading folder is stripped when all share it). */
export const fromTarGz = (archive: Uint8Array, limits: PackagePublish.Limits = PackagePublish.defaultLimits): Effect.Effect<PackageStore.PackageFiles, Errors.ValidationError> =>
  Effect.gen(function*() {
    const tar = yield* Effect.try({
      try: () => new Uint8Array(gunzipSync(archive, { maxOutputLength: limits.maxTotalBytes + 1024 * 1024 })),
      catch: () => invalid("not a gzip file, or larger than the package size limit when unpacked")
    })
    const files = new Map<string, Uint8Array>()
    let offset = 0
    while (offset + 512 <= tar.length) {
      const header = tar.subarray(offset, offset + 512)
      if (header.every((b) => b === 0)) break
      const name = text(header, 0, 100)
      const prefix = text(header, 345, 155)
      const size = Number.parseInt(text(header, 124, 12).trim() || "0", 8)
      const type = String.fromCharCode(header[156] ?? 0)
      if (!Number.isFinite(size) || size < 0) return yield* invalid(`entry ${name} has a bad size`)
      const start = offset + 512
      if (start + size > tar.length) return yield* invalid(`entry ${name} is truncated`)
      const path = prefix === "" ? name : `${prefix}/${name}`
      if (type === "0" || type === "\u0000") files.set(path.replace(/^\.\//, ""), tar.slice(start, start + size))
      if (files.size > limits.maxFiles) return yield* invalid(`more than ${limits.maxFiles} files`)
      offset = start + Math.ceil(size / 512) * 512
    }
    return stripCommonFolder(files)
  })

// An archive made with `tar czf x.tgz mypackage/` puts everything under `mypackage/`.
const stripCommonFolder = (files: ReadonlyMap<string, Uint8Array>): ReadonlyMap<string, Uint8Array> => {
  const paths = [...files.keys()]
  const first = paths[0]?.split("/")[0]
  if (first === undefined || files.has("publisher.json") || !paths.every((p) => p.startsWith(`${first}/`))) return files
  return new Map([...files].map(([p, c]) => [p.slice(first.length + 1), c]))
}

/** Writes package files as a gzipped tar archive (for clients and tests). */
export const toTarGz = (files: PackageStore.PackageFiles): Uint8Array => {
  const blocks: Array<Uint8Array> = []
  const encoder = new TextEncoder()
  for (const [path, content] of files) {
    const header = new Uint8Array(512)
    const write = (value: string, at: number, length: number) => header.set(encoder.encode(value).subarray(0, length), at)
    write(path.length > 100 ? path.slice(path.length - 100) : path, 0, 100)
    if (path.length > 100) write(path.slice(0, path.length - 100).replace(/\/$/, ""), 345, 155)
    write("0000644\u0000", 100, 8)
    write("0000000\u0000", 108, 8)
    write("0000000\u0000", 116, 8)
    write(`${content.length.toString(8).padStart(11, "0")}\u0000`, 124, 12)
    write(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, "0")}\u0000`, 136, 12)
    write("        ", 148, 8)
    header[156] = "0".charCodeAt(0)
    write("ustar\u000000", 257, 8)
    const checksum = header.reduce((sum, b) => sum + b, 0)
    write(`${checksum.toString(8).padStart(6, "0")}\u0000 `, 148, 8)
    blocks.push(header, content, new Uint8Array((512 - (content.length % 512)) % 512))
  }
  blocks.push(new Uint8Array(1024))
  const total = blocks.reduce((n, b) => n + b.length, 0)
  const tar = new Uint8Array(total)
  let at = 0
  for (const b of blocks) {
    tar.set(b, at)
    at += b.length
  }
  return new Uint8Array(gzipSync(tar))
}

/** Reads a package folder (every regular file below it, dot-folders skipped). */
export const fromDirectory = (dir: string): Effect.Effect<PackageStore.PackageFiles, Errors.ValidationError> =>
  Effect.tryPromise({
    try: async () => {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true })
      const files = new Map<string, Uint8Array>()
      for (const entry of entries) {
        if (!entry.isFile()) continue
        const full = join(entry.parentPath, entry.name)
        const path = relative(dir, full).split(sep).join("/")
        if (path.split("/").some((segment) => segment.startsWith("."))) continue
        files.set(path, new Uint8Array(await readFile(full)))
      }
      return files
    },
    catch: () => new Errors.ValidationError({ message: `Cannot read the package folder ${dir}` })
  })
