/**
 * Okapi BM25 over short term lists (entity names, docs), with postings built once per index so a
 * query touches only the documents that share a term with it. Scores are also given normalized:
 * divided by what a document of average length holding every query term once would score, which
 * makes them an IDF-weighted coverage in 0–1 that the calibration can reason about.
 */

/** A BM25 index over documents numbered from 0. */
export interface Bm25 {
  readonly documents: number
  readonly averageLength: number
  readonly k1: number
  readonly b: number
  readonly lengths: Float64Array
  /** term → [document, term frequency] pairs, flattened. */
  readonly postings: ReadonlyMap<string, Int32Array>
}

/** Builds the index; `k1` and `b` default to the usual 1.2 and 0.75. */
export const make = (
  documents: ReadonlyArray<ReadonlyArray<string>>,
  options: { readonly k1?: number; readonly b?: number } = {}
): Bm25 => {
  const lengths = new Float64Array(documents.length)
  const lists = new Map<string, Array<number>>()
  let total = 0
  documents.forEach((terms, id) => {
    lengths[id] = terms.length
    total += terms.length
    const counts = new Map<string, number>()
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
    for (const [term, tf] of counts) {
      const list = lists.get(term)
      if (list === undefined) lists.set(term, [id, tf])
      else list.push(id, tf)
    }
  })
  const postings = new Map<string, Int32Array>()
  for (const [term, list] of lists) postings.set(term, Int32Array.from(list))
  return {
    documents: documents.length,
    averageLength: documents.length === 0 ? 1 : Math.max(1, total / documents.length),
    k1: options.k1 ?? 1.2,
    b: options.b ?? 0.75,
    lengths,
    postings
  }
}

/** Number of documents holding the term. */
export const documentFrequency = (index: Bm25, term: string): number => (index.postings.get(term)?.length ?? 0) / 2

/** BM25's inverse document frequency (the always-positive variant); unseen terms get the maximum. */
export const idf = (index: Bm25, term: string): number => {
  const df = documentFrequency(index, term)
  return Math.log(1 + (index.documents - df + 0.5) / (df + 0.5))
}

/** Raw BM25 scores of every document for the query terms (duplicates in the query count once). */
export const scoreAll = (index: Bm25, query: ReadonlyArray<string>): Float64Array => {
  const scores = new Float64Array(index.documents)
  const { k1, b, averageLength, lengths } = index
  for (const term of new Set(query)) {
    const list = index.postings.get(term)
    if (list === undefined) continue
    const weight = idf(index, term)
    for (let i = 0; i < list.length; i += 2) {
      const id = list[i] ?? 0
      const tf = list[i + 1] ?? 0
      const norm = k1 * (1 - b + b * (lengths[id] ?? 0) / averageLength)
      scores[id] = (scores[id] ?? 0) + weight * tf * (k1 + 1) / (tf + norm)
    }
  }
  return scores
}

/**
 * Scores normalized to 0–1: raw BM25 divided by the sum of the query terms' IDF, which is the
 * score of an average-length document holding each term once. A term no document holds still
 * counts in the divisor, so an off-topic word lowers the score. Values above 1 (short documents,
 * repeated terms) are clipped.
 */
export const scoreAllNormalized = (index: Bm25, query: ReadonlyArray<string>): Float64Array => {
  const scores = scoreAll(index, query)
  let norm = 0
  for (const term of new Set(query)) norm += idf(index, term)
  if (norm <= 0) return scores.fill(0)
  for (let i = 0; i < scores.length; i++) scores[i] = Math.min(1, (scores[i] ?? 0) / norm)
  return scores
}
