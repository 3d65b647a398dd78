/**
 * The `get_context` search service. It keeps one `EntityIndex` per published version in memory,
 * keyed by the version's location: built by `build` at publish time (through the `ContextIndex`
 * port) or lazily by the first search that needs it, and forgotten by `drop`. A search splits the
 * question into phrases, scores every entity of every version in scope per phrase and answers in
 * the shape of the spec's `sources` member.
 */
import { ContextIndex, SemanticRuntime } from "@modelgate/core"
import { Cache, Clock, Context, Duration, Effect, Exit, Layer } from "effect"
import * as EntityIndex from "./EntityIndex.ts"
import * as Phrases from "./Phrases.ts"
import * as Scoring from "./Scoring.ts"
import * as Semantic from "./Semantic.ts"
import * as Tokens from "./Tokens.ts"
import * as ValueIndex from "./ValueIndex.ts"
import * as WordVectors from "./WordVectors.ts"

type VersionLocation = SemanticRuntime.VersionLocation

/** A version to search, with the names the answer reports and an optional narrower scope. */
export interface Target {
  readonly project: string
  readonly package: string
  readonly version: VersionLocation
  /** Reported as `version_id`; defaults to `version.version`. */
  readonly versionId?: string | undefined
  /** Only this model file of the version. */
  readonly modelUri?: string | undefined
  /** Only this source of the model (requires `modelUri`). */
  readonly sourceName?: string | undefined
}

/** A search. `limit` caps the entities per phrase and source (default `defaultLimit`). */
export interface SearchRequest {
  readonly question: string
  readonly targets: ReadonlyArray<Target>
  readonly limit?: number | undefined
}

/** A matched entity, as `get_context` returns it. */
export interface EntityMatch {
  readonly name: string
  readonly field_type: string
  readonly data_type: string
  readonly description: string
  readonly score: number
  readonly match_reason: Scoring.MatchReason
  /** Indexed values of a dimension: the ones the question named first. */
  readonly values?: ReadonlyArray<string>
}

/** A phrase of the question with its entities in one source. */
export interface PhraseMatch {
  readonly phrase: string
  readonly phrase_description: string
  readonly overall_score: number
  readonly entities: ReadonlyArray<EntityMatch>
}

/** The matches in one source of one model. */
export interface SourceMatch {
  readonly project_name: string
  readonly package_name: string
  readonly model_uri: string
  /** Empty for named queries, which belong to the model rather than a source. */
  readonly source_name: string
  readonly version_id: string
  readonly phrases: ReadonlyArray<PhraseMatch>
}

/** A search's answer: sources best first, and the phrases the question was split into. */
export interface SearchResult {
  readonly sources: ReadonlyArray<SourceMatch>
  readonly phrases: ReadonlyArray<Phrases.Phrase>
}

/** Entities per phrase and source when the request gives no limit. */
export const defaultLimit = 10
/** Values listed under a dimension. */
export const valuesShown = 5
/** Sources in an answer at most. */
export const maxSources = 12
/**
 * A version contributes to an answer only when some phrase anchors the question in it: an entity
 * matched by name, doc or meaning at this score, or a value named exactly as stored (case
 * included). Lower-case value words ("weather", "cancelled") and time phrases alone do not
 * anchor, so "what will the weather be tomorrow" finds nothing in a flights model.
 */
export const anchorScore = 0.55

/**
 * Share of a phrase's weighted content words the index must know (at least) for the phrase to
 * anchor a version, and of the question's (more than) for the question to: an off-topic question
 * can share a generic word with a model ("count", "rate", "time", "opening") but not most of its
 * words ("fix a flat tire on my bicycle" is half known, through a doc's "fixed list").
 */
export const knownShare = 0.5

/** Share of the question's weighted words the index must know for a thin (one-word) anchor to count. */
export const weakAnchorShare = 0.8

const isMostlyKnown = (known: number, words: number, strict = false) =>
  words === 0 || (strict ? known > knownShare * words + 1e-9 : known >= knownShare * words - 1e-9)

/** Options of the service. */
export interface Options {
  /**
   * Word vectors for the meaning signal; defaults to the package's offline table
   * (`WordVectors.load()`). When they resolve to undefined only name, doc and value signals score.
   */
  readonly vectors?: Effect.Effect<Semantic.Vectors | undefined> | undefined
  /** Replaces offline phrase extraction (e.g. a language model); offline is used when it fails. */
  readonly phraseExtractor?: Phrases.Extractor | undefined
  /** Adds a sentence-embedding meaning signal. */
  readonly embeddingModel?: Semantic.EmbeddingModel | undefined
  /** Value queries running at once during a build (default 2). */
  readonly valueConcurrency?: number | undefined
  /** Versions kept in memory (default 512; the least recently used is rebuilt on its next search). */
  readonly capacity?: number | undefined
}

/** The retrieval service. */
export class Retrieval extends Context.Service<Retrieval, {
  /** Answers a question over the targets; indexes missing from memory are built first. */
  readonly search: (request: SearchRequest) => Effect.Effect<SearchResult, ContextIndex.IndexBuildFailed>
  /** Builds (or rebuilds) a version's index and keeps it in memory. */
  readonly build: (
    version: VersionLocation,
    onProgress?: (progress: ContextIndex.BuildProgress) => Effect.Effect<void>
  ) => Effect.Effect<ContextIndex.BuildSummary, ContextIndex.IndexBuildFailed>
  /** Forgets a version's index. */
  readonly drop: (version: VersionLocation) => Effect.Effect<void>
}>()("@modelgate/retrieval/Retrieval") {}

interface Loaded {
  readonly target: Target
  readonly index: EntityIndex.EntityIndex
}

/** The offline word-vector table, or no meaning signal (with a warning) when it cannot be read. */
const defaultVectors: Effect.Effect<Semantic.Vectors | undefined> = WordVectors.load().pipe(
  Effect.map((table): Semantic.Vectors | undefined => Semantic.fromTable(table)),
  Effect.catch((e) => Effect.as(Effect.logWarning(`get_context: no word vectors, meaning signal off: ${e.message}`), undefined))
)

const round = (x: number) => Math.round(x * 1000) / 1000

/** The service over the semantic runtime. */
export const layer = (options: Options = {}): Layer.Layer<Retrieval, never, SemanticRuntime.SemanticRuntime> =>
  Layer.effect(Retrieval, make(options))

const make = Effect.fnUntraced(function*(options: Options) {
  const runtime = yield* SemanticRuntime.SemanticRuntime
  const vectors = yield* Effect.cached(options.vectors ?? defaultVectors)
  const concurrency = Math.max(1, options.valueConcurrency ?? 2)

  const buildIndex = Effect.fnUntraced(function*(
    version: VersionLocation,
    onProgress: (progress: ContextIndex.BuildProgress) => Effect.Effect<void>
  ) {
    yield* onProgress({ done: 0, total: 1, step: "models" })
    const models = yield* runtime.describe(version).pipe(
      Effect.mapError((e) => new ContextIndex.IndexBuildFailed({ message: e.message }))
    )
    yield* onProgress({ done: 1, total: 1, step: "models" })
    const entities = EntityIndex.entitiesOf(models)
    const { targets, fieldOf } = EntityIndex.valueTargets(entities)
    let done = 0
    const values = yield* Effect.forEach(targets, (target) =>
      runtime.execute(version, { _tag: "Custom", modelPath: target.modelPath, query: EntityIndex.valueQuery(target) }, {
        rowLimit: target.cap + 1
      }).pipe(
        Effect.map((result): EntityIndex.FieldValues => ({ field: target.field, values: EntityIndex.valuesFromRows(target, result.rows) })),
        // A dimension whose values cannot be read is still searchable by name and doc.
        Effect.catch((e) =>
          Effect.as(
            Effect.logWarning(`get_context index: values of ${target.source}.${[...target.path, target.name].join(".")}: ${e.message}`),
            { field: target.field, values: [] }
          )
        ),
        Effect.tap(() => Effect.suspend(() => onProgress({ done: ++done, total: targets.length, step: "values" })))
      ), { concurrency })
    const modelVectors = options.embeddingModel === undefined ? undefined : yield* options.embeddingModel.embed(
      entities.map((e) => `${e.name}: ${e.doc}`)
    ).pipe(Effect.catch(() => Effect.succeed(undefined)))
    return EntityIndex.make({ entities, fieldOf, values, vectors: yield* vectors, modelVectors })
  })

  const locations = new Map<string, VersionLocation>()
  const keepSuccess = <A, E>(exit: Exit.Exit<A, E>) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero
  const indexes = yield* Cache.makeWith((location: string) => {
    const version = locations.get(location)
    return version === undefined
      ? Effect.fail(new ContextIndex.IndexBuildFailed({ message: `Unknown version ${location}` }))
      : buildIndex(version, () => Effect.void)
  }, { capacity: options.capacity ?? 512, timeToLive: keepSuccess })

  const indexOf = (version: VersionLocation) =>
    Effect.suspend(() => {
      locations.set(version.location, version)
      return Cache.get(indexes, version.location)
    })

  const build = Effect.fn("Retrieval.build")(function*(
    version: VersionLocation,
    onProgress?: (progress: ContextIndex.BuildProgress) => Effect.Effect<void>
  ) {
    const started = yield* Clock.currentTimeMillis
    locations.set(version.location, version)
    const index = yield* buildIndex(version, onProgress ?? (() => Effect.void))
    yield* Cache.set(indexes, version.location, index)
    const finished = yield* Clock.currentTimeMillis
    return { entities: index.entities.length, values: EntityIndex.valueCount(index), millis: finished - started }
  })

  const drop = Effect.fn("Retrieval.drop")(function*(version: VersionLocation) {
    yield* Cache.invalidate(indexes, version.location)
    locations.delete(version.location)
  })

  const search = Effect.fn("Retrieval.search")(function*(request: SearchRequest) {
    // One broken version does not sink a project-wide search; a search of one version reports it.
    const tolerant = request.targets.length > 1
    const loaded = yield* Effect.forEach(request.targets, (target) =>
      indexOf(target.version).pipe(
        Effect.map((index): Loaded | undefined => ({ target, index })),
        Effect.catch((e) =>
          tolerant ? Effect.as(Effect.logWarning(`get_context: ${e.message}`), undefined) : Effect.fail(e)
        )
      ))
    const searched = loaded.filter((x): x is Loaded => x !== undefined)
    const hints: Phrases.Hints = {
      isValue: (text) => searched.some(({ index }) => ValueIndex.has(index.values, text)),
      isName: (text) => searched.some(({ index }) => EntityIndex.isName(index, text))
    }
    const phrases = options.phraseExtractor === undefined
      ? Phrases.extract(request.question, hints)
      : yield* options.phraseExtractor.extract(request.question, hints).pipe(
        Effect.catch(() => Effect.succeed(Phrases.extract(request.question, hints)))
      )
    const phraseModelVectors = options.embeddingModel === undefined || phrases.length === 0
      ? undefined
      : yield* options.embeddingModel.embed(phrases.map((p) => p.text)).pipe(Effect.catch(() => Effect.succeed(undefined)))
    const limit = request.limit !== undefined && request.limit > 0 ? Math.floor(request.limit) : defaultLimit
    const perVersion = searched.map(({ target, index }) => searchVersion(index, target, phrases, limit, phraseModelVectors, options.embeddingModel))
    const sources = cohere(perVersion, phrases)
    sources.sort((x, y) => y.best - x.best || y.total - x.total)
    return {
      sources: sources.slice(0, maxSources).map(({ best: _best, total: _total, ...source }) => source),
      phrases
    }
  })

  return Retrieval.of({ search, build, drop })
})

/**
 * How much a version's coverage of the question counts: a version that answers only some of the
 * question's phrases has its scores lowered by up to this share, relative to the version that
 * answers them best.
 */
export const coherenceWeight = 0.1

type Ranked = SourceMatch & { readonly best: number; readonly total: number }

/**
 * Versions answering more of the question rank first: when several versions answer, each
 * version's coverage is the sum over the question's non-time phrases of its best entity score,
 * over the sum of the best scores any version reaches, and its scores are multiplied by
 * `1 - coherenceWeight × (1 - coverage)`. "How much hail damage did we see in Ohio" finds `state`
 * in three packages, but only the insurance package also knows hail and damage.
 */
const cohere = (perVersion: ReadonlyArray<ReadonlyArray<Ranked>>, phrases: ReadonlyArray<Phrases.Phrase>): Array<Ranked> => {
  const answering = perVersion.filter((sources) => sources.length > 0)
  if (answering.length < 2) return answering.flat()
  const counted = new Set(phrases.filter((p) => p.kind !== "time").map((p) => p.text))
  const bestOf = (sources: ReadonlyArray<Ranked>) => {
    const best = new Map<string, number>()
    for (const s of sources) {
      for (const p of s.phrases) if (counted.has(p.phrase)) best.set(p.phrase, Math.max(best.get(p.phrase) ?? 0, p.overall_score))
    }
    return best
  }
  const bests = answering.map(bestOf)
  const overall = new Map<string, number>()
  for (const best of bests) for (const [phrase, score] of best) overall.set(phrase, Math.max(overall.get(phrase) ?? 0, score))
  const reachable = [...overall.values()].reduce((a, b) => a + b, 0)
  if (reachable === 0) return answering.flat()
  return answering.flatMap((sources, i) => {
    const covered = [...(bests[i] ?? new Map<string, number>()).values()].reduce((a, b) => a + b, 0)
    const factor = 1 - coherenceWeight * (1 - covered / reachable)
    if (factor >= 1) return sources
    return sources.map((s): Ranked => ({
      ...s,
      best: s.best * factor,
      total: s.total * factor,
      phrases: s.phrases.map((p) => ({
        ...p,
        overall_score: round(p.overall_score * factor),
        entities: p.entities.map((e) => ({ ...e, score: round(e.score * factor) }))
      }))
    }))
  })
}

/** The matches of one version, per source, with the gating rules applied. */
export const searchVersion = (
  index: EntityIndex.EntityIndex,
  target: Target,
  phrases: ReadonlyArray<Phrases.Phrase>,
  limit: number,
  phraseModelVectors?: ReadonlyArray<Float32Array> | undefined,
  embeddingModel?: Semantic.EmbeddingModel | undefined
): Array<SourceMatch & { readonly best: number; readonly total: number }> => {
  const inScope = (e: EntityIndex.Entity) =>
    (target.modelUri === undefined || e.modelPath === target.modelUri) &&
    (target.sourceName === undefined || e.source === target.sourceName)
  const analyzed = phrases.map((phrase, i) =>
    Scoring.analyzePhrase(index, phrase, {
      phraseModelVector: phraseModelVectors?.[i],
      ...(embeddingModel === undefined ? {} : { modelCalibration: { floor: embeddingModel.floor, ceiling: embeddingModel.ceiling } })
    })
  )
  const scored = analyzed.map((a) =>
    a.scored.filter((s) => {
      const e = index.entities[s.entity]
      return e !== undefined && inScope(e)
    })
  )
  // An anchoring phrase must be mostly known words ("chess opening" is not, though `opened_at`
  // matches "opening"), and so must the question ("count the syllables in a haiku" is not).
  // A phrase anchors strongly by a name, an exact value or several of its words; a one-word phrase
  // matched only through a doc or a near-synonym ("renew" → renewals, "home" → home county) is
  // thin evidence, and anchors only a question the index knows almost wholly (`weakAnchorShare`).
  let strong = false
  let weak = false
  scored.forEach((list, i) => {
    if (phrases[i]?.kind === "time" || !isMostlyKnown(analyzed[i]?.known ?? 0, analyzed[i]?.words ?? 0)) return
    const several = (analyzed[i]?.terms.length ?? 0) > 1
    for (const s of list) {
      if (s.reason === "value" ? s.valueKind === "exact" : s.score >= anchorScore && (s.reason === "name" || several)) strong = true
      else if (s.reason !== "value" && s.score >= anchorScore) weak = true
    }
  })
  const known = analyzed.reduce((n, a) => n + a.known, 0)
  const words = analyzed.reduce((n, a) => n + a.words, 0)
  if (!isMostlyKnown(known, words, true)) return []
  const phraseAnchored = strong || (weak && known >= weakAnchorShare * words - 1e-9)
  showViews(index, phrases, scored, inScope)
  // A view whose name, doc and fields explain the whole question anchors it too ("which doctors
  // carry the heaviest caseload" is the doc of a leaderboard view, though no one phrase names a field).
  const viewAnchor = describeQuestion(index, phrases, analyzed, scored, inScope)
  if (!phraseAnchored && viewAnchor < anchorScore) return []
  // Sources with a match other than a time phrase's; time phrases only add to those.
  const groups = new Map<string, { modelPath: string; source: string; phrases: Array<{ i: number; list: Array<Scoring.Scored> }> }>()
  scored.forEach((list, i) => {
    for (const s of list) {
      const e = index.entities[s.entity]
      if (e === undefined) continue
      const key = `${e.modelPath}\u0000${e.source}`
      let group = groups.get(key)
      if (group === undefined) {
        group = { modelPath: e.modelPath, source: e.source, phrases: [] }
        groups.set(key, group)
      }
      let entry = group.phrases.find((p) => p.i === i)
      if (entry === undefined) {
        entry = { i, list: [] }
        group.phrases.push(entry)
      }
      entry.list.push(s)
    }
  })
  const out: Array<SourceMatch & { readonly best: number; readonly total: number }> = []
  for (const group of groups.values()) {
    if (group.phrases.every((p) => phrases[p.i]?.kind === "time")) continue
    group.phrases.sort((x, y) => x.i - y.i)
    const phraseMatches: Array<PhraseMatch> = []
    let best = 0
    let total = 0
    for (const { i, list } of group.phrases) {
      const phrase = phrases[i]
      if (phrase === undefined) continue
      const entities = list.slice(0, limit).flatMap((s) => {
        const e = index.entities[s.entity]
        return e === undefined ? [] : [entityMatch(index, e, s)]
      })
      const top = entities[0]?.score ?? 0
      if (phrase.kind !== "time") {
        best = Math.max(best, top)
        total += top
      }
      phraseMatches.push({ phrase: phrase.text, phrase_description: phrase.description, overall_score: top, entities })
    }
    out.push({
      project_name: target.project,
      package_name: target.package,
      model_uri: group.modelPath,
      source_name: group.source,
      version_id: target.versionId ?? target.version.version,
      phrases: phraseMatches,
      best,
      total
    })
  }
  return out
}

/**
 * A view (or named query) shows its fields: when two phrases of the question match two different
 * fields it groups by or aggregates ("sales" → `total_sales`, "by brand" → `brand`), the view
 * answers both, at `viewShare` of the lower of the two fields' scores (so the field a phrase names
 * still ranks first, and a weak second match does not lift the view). Value matches do not count: a named value filters, it is not shown.
 */
const showViews = (
  index: EntityIndex.EntityIndex,
  phrases: ReadonlyArray<Phrases.Phrase>,
  scored: Array<Array<Scoring.Scored>>,
  inScope: (e: EntityIndex.Entity) => boolean
): void => {
  if (index.views.length === 0 || phrases.length < 2) return
  const byEntity = scored.map((list) => new Map(list.filter((s) => s.reason !== "value").map((s) => [s.entity, s])))
  const added: Array<Array<Scoring.Scored>> = scored.map(() => [])
  for (const view of index.views) {
    const e = index.entities[view]
    const fields = index.viewFields[view]
    if (e === undefined || fields === undefined || !inScope(e)) continue
    const best: Array<{ i: number; field: number; hit: Scoring.Scored }> = []
    byEntity.forEach((map, i) => {
      if (phrases[i]?.kind === "time") return
      let top: { i: number; field: number; hit: Scoring.Scored } | undefined
      for (const f of fields) {
        const hit = map.get(f)
        if (hit !== undefined && (top === undefined || hit.score > top.hit.score)) top = { i, field: f, hit }
      }
      if (top !== undefined) best.push(top)
    })
    for (const a of best) {
      let partner = 0
      for (const b of best) if (b.i !== a.i && b.field !== a.field) partner = Math.max(partner, b.hit.score)
      if (partner === 0) continue
      const score = viewShare * Math.min(a.hit.score, partner)
      const current = byEntity[a.i]?.get(view)?.score ?? 0
      if (score > current && score >= Scoring.cutoff) {
        added[a.i]?.push({ entity: view, score, reason: a.hit.reason, matchedValues: [], valueKind: undefined })
      }
    }
  }
  merge(index, scored, added)
}

/** Puts added view scores into the phrases' lists (replacing the view's own score), best first. */
const merge = (index: EntityIndex.EntityIndex, scored: Array<Array<Scoring.Scored>>, added: ReadonlyArray<ReadonlyArray<Scoring.Scored>>) =>
  added.forEach((list, i) => {
    if (list.length === 0) return
    const ids = new Set(list.map((s) => s.entity))
    const merged = [...(scored[i] ?? []).filter((s) => !ids.has(s.entity)), ...list]
    merged.sort((x, y) =>
      y.score - x.score ||
      (index.entities[x.entity]?.path.length ?? 0) - (index.entities[y.entity]?.path.length ?? 0) ||
      x.entity - y.entity
    )
    scored[i] = merged
  })

/**
 * Words that ask for a presentation rather than a quantity ("breakdown", "trend", "report",
 * "map"...): a view answers them, but they name none of its fields. When a view is scored
 * against the whole question they count only where they match (like time words).
 */
export const viewCueWords: ReadonlySet<string> = new Set([
  "breakdown", "trend", "report", "map", "split", "mix", "scorecard", "ranking", "leaderboard", "overview",
  "summary", "dashboard", "distribution", "chart", "graph", "table", "list"
].map(Tokens.stem))

/** Parameters of `describeQuestion`. */
export const viewQuestion = {
  /** A view's whole-question score is this share of its evidence (a doc-like signal). */
  weight: 0.85,
  /** A phrase joins a view when its words are at least this much explained by what the view shows. */
  phraseShare: 0.5,
  /** A question word matching only a field's name or doc counts this much. */
  fieldWeight: 0.9,
  /** The weight's share when the question holds no presentation word (`viewCueWords`) or grain. */
  uncued: 0.9
} as const

/**
 * Views, named queries and documented fields are scored against the whole question too: how much
 * of the question's weighted words their name and doc (and, for a view, the names and docs of the
 * fields it shows) explain (exact words with the square-root allowance of a name match,
 * near-synonyms without; a word matching only a view's field counts `fieldWeight`). Time words and
 * presentation words (`viewCueWords`) count only when they match; a view's score is lowered when
 * the question asks for no presentation (`uncued`). The entity then answers every phrase that is
 * at least `phraseShare` explained by it, under the phrase's top entity when that is named (at
 * `viewShare` of it: the field a phrase names still ranks first). Fields are visited only when
 * their name or doc holds a word of the question. Returns the best whole-question score of an
 * entity that answered some phrase (0 when none did), which anchors the version like a phrase.
 */
const describeQuestion = (
  index: EntityIndex.EntityIndex,
  phrases: ReadonlyArray<Phrases.Phrase>,
  analyzed: ReadonlyArray<Scoring.PhraseAnalysis>,
  scored: Array<Array<Scoring.Scored>>,
  inScope: (e: EntityIndex.Entity) => boolean
): number => {
  // The question's distinct words, each with the phrase it came from.
  const seen = new Set<string>()
  const words: Array<{ i: number; id: number; weight: number; optional: boolean; cue: boolean; sims: Float32Array }> = []
  analyzed.forEach((a, i) => {
    const time = phrases[i]?.kind === "time" || phrases[i]?.kind === "grain"
    for (const t of a.terms) {
      if (seen.has(t.term)) continue
      seen.add(t.term)
      words.push({ i, id: index.vocabulary.ids.get(t.term) ?? -1, weight: t.weight, optional: time || viewCueWords.has(t.term), cue: viewCueWords.has(t.term), sims: t.sims })
    }
  })
  if (words.length === 0) return 0
  // Without a word or phrase asking for a presentation ("breakdown", "trend", "month by month"),
  // the question is more likely after a field than a view.
  const cued = phrases.some((p) => p.kind === "grain") || words.some((w) => w.cue)
  const weight = viewQuestion.weight * (cued ? 1 : viewQuestion.uncued)
  const added: Array<Array<Scoring.Scored>> = scored.map(() => [])
  const phraseNum = new Float64Array(phrases.length)
  const phraseDen = new Float64Array(phrases.length)
  let strongest = 0
  // Views, and documented entities whose name or doc holds a word of the question.
  const candidates = new Set<number>(index.views)
  for (const w of words) {
    if (w.id < 0 || w.optional) continue
    for (const e of index.termEntities[w.id] ?? []) if (index.entities[e]?.doc !== "") candidates.add(e)
  }
  const none = new Int32Array(0)
  for (const id of candidates) {
    const e = index.entities[id]
    const isView = e?.kind === "view" || e?.kind === "query"
    const bag = isView ? index.viewTerms[id] ?? none : none
    const fields = isView ? index.viewFields[id] ?? [] : []
    if (e === undefined || !inScope(e)) continue
    phraseNum.fill(0)
    phraseDen.fill(0)
    let soft = 0
    let exact = 0
    let den = 0
    const ownName = index.nameIds[id] ?? new Int32Array(0)
    const ownDoc = index.docIds[id] ?? new Int32Array(0)
    for (const w of words) {
      // Its own name and doc say what it is for; a view's fields' words count a little less.
      let best = 0
      let hit = false
      for (const list of [ownName, ownDoc]) {
        for (let k = 0; k < list.length; k++) {
          const v = list[k] ?? 0
          if (v === w.id) hit = true
          const x = w.sims[v] ?? 0
          if (x > best) best = x
        }
      }
      for (let k = 0; k < bag.length; k++) {
        const v = bag[k] ?? 0
        if (v === w.id) hit = true
        const x = (w.sims[v] ?? 0) * viewQuestion.fieldWeight
        if (x > best) best = x
      }
      if (w.optional) {
        // Counted only where it matches: it can raise the share, never dilute it.
        soft += w.weight * best
        den += w.weight * best
        if (hit) exact += w.weight
        continue
      }
      soft += w.weight * best
      den += w.weight
      if (hit) exact += w.weight
      phraseNum[w.i] = (phraseNum[w.i] ?? 0) + w.weight * best
      phraseDen[w.i] = (phraseDen[w.i] ?? 0) + w.weight
    }
    if (den === 0 || soft === 0) continue
    const lex = exact > 0 ? Math.sqrt(Math.min(1, exact / den)) : 0
    const meaning = Math.min(1, soft / den)
    const question = (isView ? weight : viewQuestion.weight) * Math.max(lex, meaning)
    if (question < Scoring.cutoff) continue
    const fieldSet = new Set(fields)
    let answered = false
    phrases.forEach((phrase, i) => {
      const d = phraseDen[i] ?? 0
      if (phrase.kind === "time" || phrase.kind === "grain" || d === 0 || (phraseNum[i] ?? 0) / d < viewQuestion.phraseShare) return
      const list = scored[i] ?? []
      const top = list[0]
      // A phrase that names an entity (its top one, not a view) at the anchor score keeps it first.
      const topKind = top === undefined ? undefined : index.entities[top.entity]?.kind
      const named = top !== undefined && topKind !== "view" && topKind !== "query" &&
        (top.score >= anchorScore || (top.reason !== "value" && fieldSet.has(top.entity)))
      const cap = named ? viewShare * top.score : 1
      const fit = phrase.kind === "group_by" || phrase.kind === "filter" ? 0.95 : 1
      const score = Math.min(question, cap) * fit
      const current = list.find((s) => s.entity === id)?.score ?? 0
      if (score > current && score >= Scoring.cutoff) {
        added[i]?.push({ entity: id, score, reason: "meaning", matchedValues: [], valueKind: undefined })
        answered = true
      }
    })
    if (answered && question > strongest) strongest = question
  }
  merge(index, scored, added)
  return strongest
}

/** A view answering two phrases scores this share of the lower of its two fields' scores. */
export const viewShare = 0.95

const entityMatch = (index: EntityIndex.EntityIndex, e: EntityIndex.Entity, s: Scoring.Scored): EntityMatch => {
  const base = {
    name: e.name,
    field_type: e.kind,
    data_type: e.dataType,
    description: e.doc,
    score: round(s.score),
    match_reason: s.reason
  }
  return e.valueField === undefined
    ? base
    : { ...base, values: ValueIndex.sample(index.values, e.valueField, s.matchedValues, valuesShown) }
}
