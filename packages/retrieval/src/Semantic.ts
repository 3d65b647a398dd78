/**
 * The meaning signal: word vectors (the package's offline skip-gram table, or any table with the
 * same shape) compare a phrase's words with an entity's name and doc words, so "revenue" finds
 * `total_sales` and "airline" finds `carrier_name`. Cosine similarities are calibrated to 0–1
 * with a floor below which two words count as unrelated. A remote embedding model can add a
 * second meaning signal through `EmbeddingModel`.
 */
import type { Effect } from "effect"
import { Schema } from "effect"
import type * as Tokens from "./Tokens.ts"
import type * as WordVectors from "./WordVectors.ts"

/** What the index needs of a word-vector table: unit vectors of lower-case words. */
export interface Vectors {
  readonly dimensions: number
  readonly vector: (word: string) => Float32Array | undefined
  /**
   * Whether a word is among the most frequent English words. Such words ("long", "final",
   * "good") sit close to many others in a co-occurrence space, so their near-matches count less.
   */
  readonly isCommon?: ((word: string) => boolean) | undefined
}

/** Near-matches of a common query word are scaled by this (exact stems still count fully). */
export const commonWordDamping = 0.6

/** How many of the table's most frequent words count as common. */
export const commonWords = 1_000

/**
 * The `Vectors` of a `WordVectors` table, with `isCommon` answered from the table's frequency
 * order: a word is common when it is its own nearest neighbour among the first `common` rows,
 * which its rank answers for the words there (the rest are scanned once, memoized per word).
 */
export const fromTable = (table: WordVectors.Table, common: number = commonWords): Vectors => {
  const memo = new Map<string, boolean>()
  return {
    dimensions: table.dimensions,
    vector: table.vector,
    isCommon: (word) => {
      // A word among the first rows is its own nearest neighbour there: no scan needed.
      const rank = table.rank(word)
      if (rank === undefined) return false
      if (rank < common) return true
      const known = memo.get(word)
      if (known !== undefined) return known
      const v = table.vector(word)
      const nearest = v === undefined ? undefined : table.nearestTo(v, 1, { within: common })[0]
      const answer = nearest !== undefined && nearest.similarity > 0.999
      if (memo.size < 100_000) memo.set(word, answer)
      return answer
    }
  }
}

/**
 * Calibration of word-to-word cosine similarity: at or below `floor` words are unrelated (0), at
 * or above `ceiling` they are interchangeable (1), linear in between. Chosen on the dev questions
 * with the offline GloVe table: synonyms in a data model (revenue/sales 0.78, airline/carrier
 * 0.75, planes/aircraft 0.89) sit high, but so do merely topical pairs of common words
 * (long/time 0.75, sales/products 0.72), so the floor is high and the name formula also asks how
 * much of the name the phrase covers.
 */
export const calibration = { floor: 0.5, ceiling: 0.85 } as const

/** A cosine similarity mapped to 0–1 by `calibration`. */
export const calibrate = (cosine: number, floor: number = calibration.floor, ceiling: number = calibration.ceiling): number =>
  cosine <= floor ? 0 : cosine >= ceiling ? 1 : (cosine - floor) / (ceiling - floor)

/** Dot product of two vectors of equal length. */
export const dot = (a: Float32Array, b: Float32Array, offset = 0): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[offset + i] ?? 0)
  return sum
}

/** The unit-length weighted mean of the words' vectors; `undefined` when no word has one. */
export const embed = (
  vectors: Vectors,
  terms: ReadonlyArray<Tokens.Term>,
  weights?: ReadonlyArray<number>
): Float32Array | undefined => {
  const out = new Float32Array(vectors.dimensions)
  let any = false
  terms.forEach((t, i) => {
    const v = vectorOf(vectors, t)
    if (v === undefined) return
    any = true
    const w = weights?.[i] ?? 1
    for (let d = 0; d < out.length; d++) out[d] = (out[d] ?? 0) + w * (v[d] ?? 0)
  })
  if (!any) return undefined
  const norm = Math.sqrt(dot(out, out))
  if (norm === 0) return undefined
  for (let d = 0; d < out.length; d++) out[d] = (out[d] ?? 0) / norm
  return out
}

/**
 * The vector of a term: the normalized mean of its surface word's and its stem's vectors (either
 * alone when the other is unknown), so `carriers` and `carrier` meet `airline` alike.
 */
export const vectorOf = (vectors: Vectors, t: Tokens.Term): Float32Array | undefined => {
  const a = vectors.vector(t.word)
  const b = t.term === t.word ? undefined : vectors.vector(t.term)
  if (a === undefined || b === undefined) return a ?? b
  const out = new Float32Array(a.length)
  for (let d = 0; d < out.length; d++) out[d] = (a[d] ?? 0) + (b[d] ?? 0)
  const norm = Math.sqrt(dot(out, out))
  if (norm === 0) return a
  for (let d = 0; d < out.length; d++) out[d] = (out[d] ?? 0) / norm
  return out
}

/** The distinct terms of an index with their vectors in one matrix, so a query compares with all at once. */
export interface Vocabulary {
  readonly ids: ReadonlyMap<string, number>
  readonly terms: ReadonlyArray<string>
  readonly dimensions: number
  /** Row i is the unit vector of term i, zeros when the table does not know it. */
  readonly matrix: Float32Array
  readonly known: Uint8Array
}

/** The vocabulary of the given terms. */
export const vocabulary = (vectors: Vectors | undefined, terms: Iterable<Tokens.Term>): Vocabulary => {
  const ids = new Map<string, number>()
  const forms: Array<Set<string>> = []
  const list: Array<string> = []
  for (const t of terms) {
    const id = ids.get(t.term)
    if (id !== undefined) {
      forms[id]?.add(t.word)
      continue
    }
    ids.set(t.term, list.length)
    list.push(t.term)
    forms.push(new Set([t.term, t.word]))
  }
  const dimensions = vectors?.dimensions ?? 0
  const matrix = new Float32Array(list.length * dimensions)
  const known = new Uint8Array(list.length)
  if (vectors !== undefined) {
    // A stem's row is the normalized mean of the vectors of every form seen (and of the stem).
    list.forEach((_term, i) => {
      const row = matrix.subarray(i * dimensions, (i + 1) * dimensions)
      for (const word of forms[i] ?? []) {
        const v = vectors.vector(word)
        if (v === undefined) continue
        known[i] = 1
        for (let d = 0; d < dimensions; d++) row[d] = (row[d] ?? 0) + (v[d] ?? 0)
      }
      const norm = Math.sqrt(dot(row, row))
      if (norm > 0) for (let d = 0; d < dimensions; d++) row[d] = (row[d] ?? 0) / norm
    })
  }
  return { ids, terms: list, dimensions, matrix, known }
}

/**
 * Calibrated similarity of one query term to every vocabulary term: 1 for the same stem, the
 * calibrated cosine otherwise, 0 without vectors.
 */
export const similarities = (vocab: Vocabulary, vectors: Vectors | undefined, query: Tokens.Term): Float32Array => {
  const out = new Float32Array(vocab.terms.length)
  const v = vectors === undefined ? undefined : vectorOf(vectors, query)
  if (v !== undefined && vocab.dimensions === v.length) {
    const dims = vocab.dimensions
    const damping = vectors?.isCommon?.(query.word) === true ? commonWordDamping : 1
    for (let i = 0; i < out.length; i++) {
      if (vocab.known[i] === 1) out[i] = damping * calibrate(dot(v, vocab.matrix, i * dims))
    }
  }
  const same = vocab.ids.get(query.term)
  if (same !== undefined) out[same] = 1
  return out
}

/** A remote embedding model failed; the word-vector signal is used alone. */
export class EmbeddingFailed extends Schema.TaggedError<EmbeddingFailed>()("EmbeddingFailed", { message: Schema.String }) {}

/**
 * A sentence-embedding model (e.g. a remote service) that adds a meaning signal: entities are
 * embedded once at build (`"name: doc"`), phrases at search. Its cosines are calibrated with
 * its own `floor` and `ceiling`.
 */
export interface EmbeddingModel {
  readonly name: string
  readonly floor: number
  readonly ceiling: number
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbeddingFailed>
}
