/**
 * Scores every entity of an index against one phrase, on a calibrated 0–1 scale, and says which
 * signal won: `name` (the phrase's words are the entity's name words), `doc` (BM25 over its doc),
 * `meaning` (word vectors align the phrase with the name or doc: synonyms), or `value` (the phrase
 * names a stored value of the dimension). Pure functions over a prebuilt `EntityIndex`.
 */
import * as Bm25 from "./Bm25.ts"
import type * as EntityIndex from "./EntityIndex.ts"
import * as Glossary from "./Glossary.ts"
import { termWeight } from "./EntityIndex.ts"
import type * as Phrases from "./Phrases.ts"
import * as Semantic from "./Semantic.ts"
import * as Tokens from "./Tokens.ts"
import * as ValueIndex from "./ValueIndex.ts"

/** Which signal gave an entity its score. */
export type MatchReason = "name" | "doc" | "value" | "meaning"

/** An entity's score for a phrase. */
export interface Scored {
  readonly entity: number
  readonly score: number
  readonly reason: MatchReason
  /** Stored values of the entity that the phrase named, best first. */
  readonly matchedValues: ReadonlyArray<string>
  /** How the best value matched, when `reason` is `value`. */
  readonly valueKind: ValueIndex.MatchKind | undefined
}

/**
 * The relevance cutoff: entities scoring below it are not returned. On the calibrated scale 0.5
 * means "half the phrase's weight is explained by the entity's name, or its doc covers the phrase
 * about as well as an average doc holding every word once, or a near-synonym". Off-topic
 * questions stay below it: their words neither occur in names, docs or values nor sit close to
 * them in the word-vector space.
 */
export const cutoff = 0.5

/**
 * An entity whose best signal (times its depth prior) is under this is dropped before the
 * agreement bonus and priors: they cannot lift it over the cutoff.
 */
const considered = cutoff * 0.85

/** Entities kept per phrase after sorting; answers show far fewer. */
export const maxCandidates = 256

/** Weights of the signals: an exact name match outranks a synonym, which outranks a doc mention. */
export const weights = {
  name: 1,
  meaningName: 0.95,
  doc: 0.85,
  meaningDoc: 0.7,
  /** A phrase word written as an acronym of the name (`ARR` for `annual_run_rate`): a name match, discounted. */
  acronym: 0.9,
  /** Time phrases score date and timestamp dimensions flatly (more for documented ones). */
  time: 0.6,
  /** Each join level costs this share, so a source's own field ranks before the same field joined. */
  depthPenalty: 0.02
} as const

/**
 * A vocabulary term reaches an entity only at this calibrated similarity: the meaning signal of
 * an entity is at most `weights.meaningName` × its best term similarity (a weighted mean of
 * per-word bests, each at most that), name and doc signals need the word itself (similarity 1),
 * so an entity whose terms all stay below it is dropped by `considered` anyway (less a margin for
 * rounding).
 */
const reachSimilarity = considered / Math.max(weights.meaningName, weights.meaningDoc) - 1e-9

/** How phrase kinds favour entity kinds: a group-by wants a dimension, not a measure. */
const kindPrior = (phrase: Phrases.Kind, e: EntityIndex.Entity): number => {
  // Sources and joins are containers: a field or view is what a query uses.
  const container = e.kind === "source" ? 0.92 : e.kind === "join" ? 0.88 : 1
  const fit = phrase === "group_by" || phrase === "filter"
    ? e.kind === "measure" ? 0.9 : e.kind === "view" || e.kind === "query" ? 0.95 : 1
    : 1
  // A documented entity was curated by the modeler; raw columns (ids, keys) were not.
  const documented = e.doc === "" ? 0.95 : 1
  return container * fit * documented
}

const tokenPattern = /[\p{L}\p{N}]+(?:[-'’.&/][\p{L}\p{N}]+)*/gu

/** Word n-grams of the phrase (longest first) as they are written, for value lookups. */
const ngrams = (text: string, max = 6): Array<string> => {
  const tokens = [...text.matchAll(tokenPattern)].map((m) => m[0])
  const out: Array<string> = []
  for (let n = Math.min(max, tokens.length); n >= 1; n--) {
    for (let i = 0; i + n <= tokens.length; i++) {
      const span = tokens.slice(i, i + n)
      if (Tokens.isStopword(span[0] ?? "") || Tokens.isStopword(span[span.length - 1] ?? "")) continue
      out.push(span.join(" "))
    }
  }
  return out
}

/**
 * The value matches of a phrase per value field: best score and the values named. `covered`, when
 * given, receives the normalized words of every span of the phrase that named a value.
 */
export const valueMatches = (
  index: EntityIndex.EntityIndex,
  text: string,
  covered?: Set<string>
): Map<number, { score: number; kind: ValueIndex.MatchKind; values: Array<string> }> => {
  const out = new Map<number, { score: number; kind: ValueIndex.MatchKind; values: Array<string> }>()
  if (index.values.size === 0) return out
  const length = Tokens.normalize(text).length
  for (const gram of ngrams(text)) {
    const coverage = length === 0 ? 0 : Tokens.normalize(gram).length / length
    // Misspellings are looked for in words and short spans only; longer spans must match as stored.
    for (const match of ValueIndex.lookup(index.values, gram, { fuzzy: gram.split(" ").length <= 2 })) {
      if (covered !== undefined) for (const w of Tokens.normalize(gram).split(" ")) covered.add(w)
      // A value typed as stored (case and all) is a deliberate mention even inside a longer phrase;
      // a lower-case common word that happens to be a value ("network") needs to be most of it.
      const score = match.score * (match.kind === "exact" ? 0.8 + 0.2 * coverage : 0.5 + 0.5 * coverage)
      const current = out.get(match.field)
      if (current === undefined) out.set(match.field, { score, kind: match.kind, values: [match.value] })
      else {
        if (!current.values.includes(match.value)) current.values.push(match.value)
        if (score > current.score) {
          current.score = score
          current.kind = match.kind
        }
      }
    }
  }
  return out
}

/** Options of a phrase's scoring: a remote model's phrase vector and its calibration. */
export interface ScoreOptions {
  readonly phraseModelVector?: Float32Array | undefined
  readonly modelCalibration?: { floor: number; ceiling: number }
}

/** Scores of all entities for a phrase, those at or above `cutoff` only, best first. */
export const scorePhrase = (index: EntityIndex.EntityIndex, phrase: Phrases.Phrase, options: ScoreOptions = {}): Array<Scored> =>
  analyzePhrase(index, phrase, options).scored

/** A content word of a phrase: its term weight and its calibrated similarity to every vocabulary term. */
export interface PhraseTerm {
  readonly term: string
  readonly weight: number
  readonly sims: Float32Array
}

/** A phrase's scores, its weighted and known words, and its content words. */
export interface PhraseAnalysis {
  readonly scored: Array<Scored>
  readonly words: number
  readonly known: number
  readonly terms: ReadonlyArray<PhraseTerm>
}

/**
 * A phrase's scores, and how much of its content the index knows: a word is known when it
 * reaches some vocabulary term (itself or a near-synonym at the reach similarity) or lies in a
 * span naming a stored value. Words weigh 1, or 0.5 when they are among the most common English
 * words or belong to a filter phrase (a name the model may not store). Time phrases report none;
 * without word vectors or with a remote embedding model every word is known.
 */
export const analyzePhrase = (
  index: EntityIndex.EntityIndex,
  phrase: Phrases.Phrase,
  options: ScoreOptions = {}
): PhraseAnalysis => {
  const entities = index.entities
  const out: Array<Scored> = []
  const depth = (e: EntityIndex.Entity) => 1 - weights.depthPenalty * e.path.length
  if (phrase.kind === "time") {
    for (const id of index.timeEntities) {
      const e = entities[id]
      if (e === undefined) continue
      const score = (weights.time + (e.doc === "" ? 0 : 0.05)) * depth(e)
      out.push({ entity: id, score, reason: "meaning", matchedValues: [], valueKind: undefined })
    }
    // Their words ("month", "hour", "2024") may still name what a view groups by.
    const terms = Tokens.analyze(phrase.text).map((t): PhraseTerm => ({
      term: t.term,
      weight: termWeight(index.df, entities.length, t.term),
      sims: Semantic.similarities(index.vocabulary, index.vectors, t)
    }))
    return { scored: sort(out, entities), words: 0, known: 0, terms }
  }
  const seen = new Set<string>()
  const query = Tokens.analyze(phrase.text).filter((t) => !seen.has(t.term) && (seen.add(t.term), true))
  const covered = new Set<string>()
  const values = valueMatches(index, phrase.text, covered)
  if (query.length === 0 && values.size === 0) return { scored: [], words: 0, known: 0, terms: [] }
  const n = entities.length
  const qWeights = query.map((t) => termWeight(index.df, n, t.term))
  const totalWeight = qWeights.reduce((a, b) => a + b, 0)
  const sims = query.map((t) => Semantic.similarities(index.vocabulary, index.vectors, t))
  // The glossary's interchangeable analytics terms ("churn" and "cancellation") are near-synonyms
  // too, at a fixed similarity (damped like the vectors' near-matches for very common words).
  Glossary.related(query.map((t) => t.term)).forEach((partners, i) => {
    const s = sims[i]
    const t = query[i]
    if (s === undefined || t === undefined || partners.size === 0) return
    const similarity = Glossary.similarity * (index.vectors?.isCommon?.(t.word) === true ? Semantic.commonWordDamping : 1)
    for (const partner of partners) {
      const id = index.vocabulary.ids.get(partner)
      if (id !== undefined && (s[id] ?? 0) < similarity) s[id] = similarity
    }
  })
  const queryIds = query.map((t) => index.vocabulary.ids.get(t.term) ?? -1)
  let known = 0
  let words = 0
  const wordWeights: Array<number> = []
  const knownAlready = new Set<number>()
  for (let i = 0; i < query.length; i++) {
    const t = query[i] as Tokens.Term
    // Very common English words and names the model may not store say less about the topic.
    const w = phrase.kind === "filter" || index.vectors?.isCommon?.(t.word) === true ? 0.5 : 1
    wordWeights.push(w)
    words += w
    if (covered.has(t.word) || (queryIds[i] ?? -1) >= 0 || reaches(sims[i] as Float32Array)) {
      known += w
      knownAlready.add(i)
    }
  }
  const docLex = Bm25.scoreAllNormalized(index.docBm25, query.map((t) => t.term))
  const valueOf = new Map<number, { score: number; kind: ValueIndex.MatchKind; values: Array<string> }>()
  for (const [field, match] of values) {
    for (const id of index.fieldEntities.get(field) ?? []) valueOf.set(id, match)
  }
  // Words written as acronyms (`ARR`) that spell some field's initials stand for its whole name.
  const acronymOf = new Map<number, number>()
  const acronymWords = new Set<number>()
  for (const a of Tokens.acronyms(phrase.text)) {
    const i = query.findIndex((t) => t.word === a || t.term === a)
    const named = index.initialisms.get(a)
    if (i < 0 || named === undefined || acronymWords.has(i)) continue
    acronymWords.add(i)
    for (const id of named) acronymOf.set(id, (acronymOf.get(id) ?? 0) + (qWeights[i] ?? 0))
    if (!knownAlready.has(i)) known += wordWeights[i] ?? 0
  }
  for (const id of candidates(index, sims, valueOf, options.phraseModelVector !== undefined && index.modelVectors !== undefined, acronymOf)) {
    const e = entities[id]
    if (e === undefined) continue
    const nameIds = index.nameIds[id] ?? new Int32Array(0)
    const pathIds = index.pathIds[id] ?? new Int32Array(0)
    const docIds = index.docIds[id] ?? new Int32Array(0)
    let lexName = 0
    let softName = 0
    let softDoc = 0
    if (query.length > 0 && nameIds.length > 0) {
      // Precision: how much of the phrase's weight the name (or join path) explains.
      let lexPrecision = 0
      let softPrecision = 0
      let docPrecision = 0
      for (let i = 0; i < query.length; i++) {
        const s = sims[i] as Float32Array
        const qid = queryIds[i] ?? -1
        const w = qWeights[i] ?? 0
        let exact = false
        let best = 0
        for (let k = 0; k < nameIds.length; k++) {
          const v = nameIds[k] ?? 0
          if (v === qid) exact = true
          const x = s[v] ?? 0
          if (x > best) best = x
        }
        for (let k = 0; k < pathIds.length; k++) {
          const v = pathIds[k] ?? 0
          // A join path word counts at half weight: `origin.city` is about the city.
          if (v === qid) exact = true
          const x = (s[v] ?? 0) * 0.5
          if (x > best) best = x
        }
        if (exact) lexPrecision += w
        softPrecision += w * best
        let bestDoc = 0
        for (let k = 0; k < docIds.length; k++) {
          const x = s[docIds[k] ?? 0] ?? 0
          if (x > bestDoc) bestDoc = x
        }
        docPrecision += w * bestDoc
      }
      // Recall: how much of the name the phrase covers; handle words (`name`, `code`) count little.
      let lexRecall = 0
      let softRecall = 0
      let nameWeight = 0
      for (let k = 0; k < nameIds.length; k++) {
        const v = nameIds[k] ?? 0
        const w = index.generic[v] === 1 ? 0.3 : 1
        nameWeight += w
        let best = 0
        let exact = false
        for (let i = 0; i < query.length; i++) {
          if (queryIds[i] === v) exact = true
          const x = (sims[i] as Float32Array)[v] ?? 0
          if (x > best) best = x
        }
        if (exact) lexRecall += w
        softRecall += w * best
      }
      lexRecall /= nameWeight
      softRecall /= nameWeight
      // The phrase must be explained by the name (precision); covering the whole name adds the
      // rest. An exact word is strong evidence, so extra words in the phrase dilute it gently
      // (square root); near-synonyms get no such allowance.
      lexName = lexRecall > 0 ? Math.sqrt(lexPrecision / totalWeight) * (0.75 + 0.25 * lexRecall) : 0
      softName = (softPrecision / totalWeight) * (0.75 + 0.25 * softRecall)
      softDoc = docIds.length > 0 ? docPrecision / totalWeight : 0
    }
    const modelVector = index.modelVectors?.[id]
    if (options.phraseModelVector !== undefined && modelVector !== undefined) {
      const c = options.modelCalibration ?? Semantic.calibration
      softDoc = Math.max(softDoc, Semantic.calibrate(Semantic.dot(options.phraseModelVector, modelVector), c.floor, c.ceiling))
    }
    const acronym = acronymOf.get(id)
    if (acronym !== undefined) {
      // The acronym covers the whole name; the phrase's other words must still be explained.
      let rest = 0
      for (let i = 0; i < query.length; i++) {
        const qid = queryIds[i] ?? -1
        if (!acronymWords.has(i) && qid >= 0 && nameIds.includes(qid)) rest += qWeights[i] ?? 0
      }
      lexName = Math.max(lexName, Math.sqrt(Math.min(1, (acronym + rest) / totalWeight)) * weights.acronym)
    }
    const value = valueOf.get(id)
    const nameSignal = lexName * weights.name
    const docSignal = (docLex[id] ?? 0) * weights.doc
    const meaningSignal = Math.max(softName * weights.meaningName, softDoc * weights.meaningDoc)
    const valueSignal = value?.score ?? 0
    let reason: MatchReason = "name"
    let best = nameSignal
    if (docSignal > best) { reason = "doc"; best = docSignal }
    if (meaningSignal > best) { reason = "meaning"; best = meaningSignal }
    if (valueSignal > best) { reason = "value"; best = valueSignal }
    if (best * depth(e) < considered) continue
    // Independent signals agreeing (name and doc, say) add a little confidence.
    const second = reason === "name" ? Math.max(docSignal, meaningSignal, valueSignal)
      : reason === "doc" ? Math.max(nameSignal, meaningSignal, valueSignal)
      : reason === "meaning" ? Math.max(nameSignal, docSignal, valueSignal)
      : Math.max(nameSignal, docSignal, meaningSignal)
    const combined = best + 0.1 * (1 - best) * second
    const score = Math.min(1, combined) * depth(e) * kindPrior(phrase.kind, e)
    if (score < cutoff) continue
    out.push({
      entity: id,
      score,
      reason,
      matchedValues: value?.values ?? [],
      valueKind: reason === "value" ? value?.kind : undefined
    })
  }
  // Without word vectors, or with a remote model judging meaning, an unknown word may still be a
  // synonym: coverage cannot tell, so every word counts as known.
  const judged = index.vectors !== undefined && options.phraseModelVector === undefined
  return {
    scored: sort(out, entities).slice(0, maxCandidates),
    words,
    known: judged ? known : words,
    terms: query.map((t, i): PhraseTerm => ({ term: t.term, weight: qWeights[i] ?? 0, sims: sims[i] as Float32Array }))
  }
}

const reaches = (s: Float32Array): boolean => {
  for (let v = 0; v < s.length; v++) if ((s[v] ?? 0) >= reachSimilarity) return true
  return false
}

/**
 * The entities a phrase can score on: those holding a vocabulary term some phrase word reaches
 * (the same stem, or a near-synonym at `reachSimilarity`), those with a matching value, and
 * those whose name's initials a word written as an acronym spells. Any
 * other entity has no name, doc or value signal and too weak a meaning signal to pass
 * `considered`, so skipping it changes no result. With a remote embedding model every entity
 * has a meaning signal and all are scored.
 */
const candidates = (
  index: EntityIndex.EntityIndex,
  sims: ReadonlyArray<Float32Array>,
  valueOf: ReadonlyMap<number, unknown>,
  all: boolean,
  acronymOf: ReadonlyMap<number, unknown>
): Iterable<number> => {
  const n = index.entities.length
  if (all) return Array.from({ length: n }, (_, id) => id)
  const marked = new Uint8Array(n)
  const out: Array<number> = []
  const mark = (id: number) => {
    if (marked[id] === 1) return
    marked[id] = 1
    out.push(id)
  }
  const terms = index.termEntities.length
  for (let v = 0; v < terms; v++) {
    let reached = false
    for (const s of sims) {
      if ((s[v] ?? 0) >= reachSimilarity) {
        reached = true
        break
      }
    }
    if (!reached) continue
    for (const id of index.termEntities[v] ?? []) mark(id)
  }
  for (const id of valueOf.keys()) mark(id)
  for (const id of acronymOf.keys()) mark(id)
  return out
}

const sort = (list: Array<Scored>, entities: ReadonlyArray<EntityIndex.Entity>): Array<Scored> =>
  list.sort((x, y) =>
    y.score - x.score ||
    (entities[x.entity]?.path.length ?? 0) - (entities[y.entity]?.path.length ?? 0) ||
    x.entity - y.entity
  )
