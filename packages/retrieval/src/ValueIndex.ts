/**
 * The distinct values of indexed dimensions, looked up by the words of a question. Exact matches
 * (case-sensitive or not) go through a map of normalized values, partial ones through a map from
 * each content term to the values holding it, and misspellings through a trigram index followed by
 * an edit-distance check, so a lookup never scans all values.
 */
import * as Tokens from "./Tokens.ts"

/** One stored value of a dimension, with the number of rows holding it. */
export interface Value {
  readonly text: string
  readonly count: number
}

/** A dimension's values as read at build time. */
export interface Field {
  /** Caller's key of the dimension (an index into its own list of value fields). */
  readonly field: number
  /** Most frequent first. */
  readonly values: ReadonlyArray<Value>
}

interface Stored {
  readonly text: string
  readonly norm: string
  readonly field: number
  readonly count: number
  readonly terms: ReadonlyArray<string>
}

interface Spelling {
  readonly norm: string
  /** Number of distinct trigrams of `norm`. */
  readonly grams: number
  readonly ids: Array<number>
}

/** How a value matched the text looked up. */
export type MatchKind = "exact" | "case" | "fuzzy" | "partial"

/** A value that matches looked-up text, with a calibrated score in 0–1. */
export interface ValueMatch {
  readonly field: number
  readonly value: string
  readonly count: number
  readonly kind: MatchKind
  readonly score: number
}

/** The value index of one version. */
export interface ValueIndex {
  readonly size: number
  readonly values: ReadonlyArray<Stored>
  readonly byNorm: ReadonlyMap<string, ReadonlyArray<number>>
  readonly byTerm: ReadonlyMap<string, ReadonlyArray<number>>
  /** term → the ids of `byTerm`, fewest terms first (then by id), so a walk can stop at a length. */
  readonly byTermShortest: ReadonlyMap<string, ReadonlyArray<number>>
  /**
   * Distinct normalized values long enough for fuzzy matching, each with its distinct trigrams
   * and the value ids sharing it (a city stored in many fields is compared once).
   */
  readonly spellings: ReadonlyArray<Spelling>
  /** trigram → indexes into `spellings` holding it, ascending. */
  readonly byTrigram: ReadonlyMap<string, ReadonlyArray<number>>
  /** field → its value ids, most frequent first. */
  readonly byField: ReadonlyMap<number, ReadonlyArray<number>>
  /** Scratch counters of shared trigrams, one per spelling (lookups are synchronous, so one suffices). */
  readonly scratch: Uint16Array
}

/** Scores of each kind of match: an exact stored value is the strongest evidence the index has. */
export const scores = {
  exact: 1,
  case: 0.96,
  /** Times the edit similarity (itself at least `fuzzyMinSimilarity`). */
  fuzzy: 0.85,
  /** Times the share of the value's terms the text covers (at least one half). */
  partial: 0.8
} as const

/** Fuzzy matching needs this edit similarity (1 − distance / longer length) and this many characters. */
export const fuzzyMinSimilarity = 0.8
export const fuzzyMinLength = 5

const trigramsOf = (norm: string): Array<string> => {
  const padded = `  ${norm} `
  const grams = new Set<string>()
  for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3))
  return [...grams]
}

const push = (map: Map<string, Array<number>>, key: string, id: number) => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [id])
  else if (list[list.length - 1] !== id) list.push(id)
}

/** Builds the index over the fields' values; empty values are skipped. */
export const make = (fields: ReadonlyArray<Field>): ValueIndex => {
  const values: Array<Stored> = []
  const byNorm = new Map<string, Array<number>>()
  const byTerm = new Map<string, Array<number>>()
  const byTrigram = new Map<string, Array<number>>()
  const byField = new Map<number, Array<number>>()
  const spellings: Array<Spelling> = []
  const spellingOf = new Map<string, Spelling>()
  for (const { field, values: list } of fields) {
    const ids: Array<number> = []
    for (const value of list) {
      const norm = Tokens.normalize(value.text)
      if (norm === "") continue
      const id = values.length
      const terms = [...new Set(Tokens.terms(value.text))]
      values.push({ text: value.text, norm, field, count: value.count, terms })
      ids.push(id)
      push(byNorm, norm, id)
      for (const term of terms) push(byTerm, term, id)
      if (norm.length < fuzzyMinLength - 1) continue
      const known = spellingOf.get(norm)
      if (known !== undefined) {
        known.ids.push(id)
        continue
      }
      const grams = trigramsOf(norm)
      const spelling = { norm, grams: grams.length, ids: [id] }
      spellingOf.set(norm, spelling)
      for (const gram of grams) push(byTrigram, gram, spellings.length)
      spellings.push(spelling)
    }
    byField.set(field, ids)
  }
  const byTermShortest = new Map<string, Array<number>>()
  for (const [term, ids] of byTerm) {
    byTermShortest.set(term, [...ids].sort((x, y) => (values[x]?.terms.length ?? 0) - (values[y]?.terms.length ?? 0) || x - y))
  }
  return {
    size: values.length,
    values,
    byNorm,
    byTerm,
    byTermShortest,
    spellings,
    byTrigram,
    byField,
    scratch: new Uint16Array(spellings.length)
  }
}

/** True when the text, normalized, is a stored value of some field. */
export const has = (index: ValueIndex, text: string): boolean => index.byNorm.has(Tokens.normalize(text))

/** Levenshtein distance with an early exit once every cell of a row exceeds `max`. */
export const editDistance = (a: string, b: string, max = Number.POSITIVE_INFINITY): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const cell = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
      current.push(cell)
      if (cell < best) best = cell
    }
    if (best > max) return max + 1
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * Values matching the text, best first, at most one per field. Exact matches win; otherwise
 * values holding every content term of the text (covering at least half of the value's terms),
 * and, for text of `fuzzyMinLength` characters or more, near-misspellings.
 */
export const lookup = (index: ValueIndex, text: string, options: { readonly fuzzy?: boolean } = {}): Array<ValueMatch> => {
  const norm = Tokens.normalize(text)
  if (norm === "") return []
  const best = new Map<number, ValueMatch>()
  const offer = (match: ValueMatch) => {
    const current = best.get(match.field)
    if (current === undefined || match.score > current.score || (match.score === current.score && match.count > current.count)) {
      best.set(match.field, match)
    }
  }
  const exact = index.byNorm.get(norm)
  if (exact !== undefined) {
    for (const id of exact) {
      const v = index.values[id]
      if (v === undefined) continue
      const kind: MatchKind = v.text.trim() === text.trim() ? "exact" : "case"
      offer({ field: v.field, value: v.text, count: v.count, kind, score: scores[kind] })
    }
  }
  const terms = [...new Set(Tokens.terms(text))]
  if (terms.length > 0) {
    // Values holding every term: walk the shortest posting list, binary-search the others
    // (ids are pushed in increasing order, so every list is sorted).
    // The walked list is the shortest one in (term count, id) order: a value holding all m terms
    // has at least m, and covering half of it means at most 2m, so the walk stops there.
    const order = terms.map((t) => ({ term: t, list: index.byTerm.get(t) ?? [] }))
    order.sort((x, y) => x.list.length - y.list.length)
    const [first, ...others] = order
    const rest = others.map((o) => o.list)
    const walk = first === undefined ? [] : index.byTermShortest.get(first.term) ?? []
    const most = 2 * terms.length
    for (const id of walk) {
      const v = index.values[id]
      if (v === undefined) continue
      if (v.terms.length > most) break
      if (v.norm === norm) continue
      const coverage = terms.length / Math.max(terms.length, v.terms.length)
      if (coverage < 0.5 || !rest.every((list) => contains(list, id))) continue
      offer({ field: v.field, value: v.text, count: v.count, kind: "partial", score: scores.partial * coverage })
    }
  }
  if (options.fuzzy !== false && norm.length >= fuzzyMinLength && exact === undefined) {
    for (const [at, shared] of fuzzyCandidates(index, norm)) {
      const spelling = index.spellings[at]
      if (spelling === undefined) continue
      // Dice over trigrams prunes before the quadratic edit distance.
      if ((2 * shared.count) / (shared.grams + spelling.grams) < 0.45) continue
      const longer = Math.max(norm.length, spelling.norm.length)
      const maxDistance = Math.floor(longer * (1 - fuzzyMinSimilarity))
      const distance = editDistance(norm, spelling.norm, maxDistance)
      if (distance > maxDistance || distance === 0) continue
      const similarity = 1 - distance / longer
      for (const id of spelling.ids) {
        const v = index.values[id]
        if (v !== undefined) offer({ field: v.field, value: v.text, count: v.count, kind: "fuzzy", score: scores.fuzzy * similarity })
      }
    }
  }
  return [...best.values()].sort((x, y) => y.score - x.score || y.count - x.count)
}

/**
 * The most edits a fuzzy match of text of this length can have: ⌊0.2 × longer⌋ for a value no
 * longer than the text, and for a longer value only while the length difference fits the budget.
 */
const maxFuzzyEdits = (length: number): number => {
  let most = Math.floor(length * (1 - fuzzyMinSimilarity))
  for (let longer = length + 1; ; longer++) {
    const edits = Math.floor(longer * (1 - fuzzyMinSimilarity))
    if (longer - length > edits) {
      // The difference grows by one per character, the budget by 0.2: once out, always out.
      return most
    }
    most = Math.max(most, edits)
  }
}

/**
 * Spellings (distinct normalized values) that may be within the fuzzy bounds of `norm`, with the
 * number of distinct trigrams they share with it, without walking every posting list. A value within edit distance d shares at
 * least g − 3d of the text's g distinct trigrams (each edit touches at most three), and a fuzzy
 * match allows d ≤ ⌊0.2 × longer⌋ ≤ ⌈g / 4⌉ as the value is then at most 1.25 × as long; the Dice
 * prune asks for more than 0.225 × g shared trigrams. With t the larger of the two, a match must
 * hold one of the g − t + 1 rarest trigrams (pigeonhole), so only those lists are walked and the
 * others are binary-searched for the candidates' exact count: the same values as walking them all.
 */
const fuzzyCandidates = (index: ValueIndex, norm: string): Array<readonly [number, { count: number; grams: number }]> => {
  const grams = trigramsOf(norm)
  const g = grams.length
  const maxEdits = maxFuzzyEdits(norm.length)
  const needed = Math.max(1, g - 3 * maxEdits, Math.floor(0.225 * g))
  const lists = grams.map((gram) => index.byTrigram.get(gram) ?? [])
  lists.sort((x, y) => x.length - y.length)
  const walked = Math.max(1, g - needed + 1)
  const counts = index.scratch
  const touched: Array<number> = []
  for (let l = 0; l < walked && l < lists.length; l++) {
    for (const id of lists[l] ?? []) {
      if (counts[id] === 0) touched.push(id)
      counts[id] = (counts[id] ?? 0) + 1
    }
  }
  const out: Array<readonly [number, { count: number; grams: number }]> = []
  for (const id of touched) {
    let count = counts[id] ?? 0
    counts[id] = 0
    // The rest can add at most one each: skip the searches when even all of them cannot reach `needed`.
    if (count + (lists.length - walked) < needed) continue
    for (let l = walked; l < lists.length; l++) if (contains(lists[l] ?? [], id)) count++
    out.push([id, { count, grams: g }])
  }
  return out
}

const contains = (list: ReadonlyArray<number>, id: number): boolean => {
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const x = list[mid] ?? 0
    if (x === id) return true
    if (x < id) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/** The values of a field to show: the matched ones first, then the most frequent, at most `limit`. */
export const sample = (index: ValueIndex, field: number, matched: ReadonlyArray<string>, limit: number): Array<string> => {
  const out = [...new Set(matched)].slice(0, limit)
  for (const id of index.byField.get(field) ?? []) {
    if (out.length >= limit) break
    const text = index.values[id]?.text
    if (text !== undefined && !out.includes(text)) out.push(text)
  }
  return out
}

/** Number of values stored for a field. */
export const fieldSize = (index: ValueIndex, field: number): number => index.byField.get(field)?.length ?? 0
