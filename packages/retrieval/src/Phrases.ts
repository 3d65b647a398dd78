/**
 * Offline phrase extraction: a question becomes the short phrases `get_context` matches one by
 * one — what to measure, what to group by, filter values (quoted, capitalized, codes, or words that
 * are stored values) and time ranges or grains. No network; a language model can replace it
 * through the `Extractor` interface.
 */
import type { Effect } from "effect"
import { Schema } from "effect"
import * as Tokens from "./Tokens.ts"

/** What a phrase is for. */
export type Kind = "entity" | "group_by" | "filter" | "time" | "grain"

/** A phrase of the question: `text` is a substring of it. */
export interface Phrase {
  readonly text: string
  readonly kind: Kind
  readonly description: string
}

/** What the extractor may ask the index: whether some text is a stored dimension value. */
export interface Hints {
  readonly isValue: (text: string) => boolean
  /** Whether the text is exactly an entity's name; such a chunk is not split around a lower-case value. */
  readonly isName?: ((text: string) => boolean) | undefined
}

/** No stored values known. */
export const noHints: Hints = { isValue: () => false }

/** A replacement extractor (e.g. an effect/ai `LanguageModel` adapter) failed; offline extraction is used. */
export class ExtractionFailed extends Schema.TaggedError<ExtractionFailed>()("ExtractionFailed", { message: Schema.String }) {}

/**
 * A phrase extractor that can replace the offline one. Phrases should be substrings of the
 * question so answers can be aligned with it.
 */
export interface Extractor {
  readonly extract: (question: string, hints: Hints) => Effect.Effect<ReadonlyArray<Phrase>, ExtractionFailed>
}

const descriptions: Readonly<Record<Kind, string>> = {
  entity: "what to measure or look up (a measure, dimension, view or source)",
  group_by: "group-by: results broken down by this",
  filter: "filter value: a stored value, name or code",
  time: "time range or period to filter on",
  grain: "time grain or trend"
}

/** The phrase's description for its kind, with a detail. */
const describe = (kind: Kind, detail?: string) => detail === undefined ? descriptions[kind] : `${descriptions[kind]} (${detail})`

interface Token {
  readonly text: string
  readonly lower: string
  readonly start: number
  readonly end: number
}

const tokenPattern = /[\p{L}\p{N}]+(?:[-'’.&/][\p{L}\p{N}]+)*/gu

const tokenize = (text: string, offset: number): Array<Token> =>
  [...text.matchAll(tokenPattern)].map((m) => ({
    text: m[0],
    lower: m[0].toLowerCase(),
    start: offset + m.index,
    end: offset + m.index + m[0].length
  }))

const relativeWords = new Set(["last", "past", "previous", "prior", "this", "next", "coming", "current", "recent", "latest"])
const numberWords = new Set([
  "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen",
  "eighteen", "twenty", "thirty", "few", "several", "couple"
])
const periodUnits = new Set([
  "day", "days", "week", "weeks", "month", "months", "quarter", "quarters", "year", "years", "decade", "winter",
  "spring", "summer", "fall", "autumn", "weekend", "weekends", "season", "holidays", "holiday", "night", "nights",
  "morning", "evening", "fortnight", "semester", "half"
])
const monthNames = new Set([
  "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
  "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"
])
const timeWords = new Set([
  "today", "yesterday", "tomorrow", "ytd", "mtd", "qtd", "tonight", "weekday", "weekdays",
  ...["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].flatMap((d) => [d, `${d}s`])
])
const grainWords = new Set([
  "daily", "weekly", "monthly", "quarterly", "yearly", "annual", "annually", "hourly", "month-by-month",
  "week-by-week", "day-by-day", "year-by-year", "year-over-year", "month-over-month", "week-over-week", "yoy", "mom",
  "seasonality", "seasonal", "trend", "trends", "over time"
])
const groupMarkers = new Set(["by", "per", "across", "each", "every"])
const connectors = new Set(["of", "on"])
const articles = new Set(["a", "an", "the", "our", "my", "their", "its", "your"])

const isYear = (t: Token) => /^(19|20)\d\d$/.test(t.lower) || /^fy ?\d\d(\d\d)?$/.test(t.lower)
const isQuarter = (t: Token) => /^q[1-4]$/.test(t.lower)
const isNumber = (t: Token) => /^\d+$/.test(t.lower) || numberWords.has(t.lower)
/** A month name; `may`, `march` and short forms only when capitalized. */
const isMonth = (t: Token) =>
  monthNames.has(t.lower) && (t.lower.length > 5 || t.lower === "june" || t.lower === "july" || /^[A-Z]/.test(t.text))

/** Length of the time expression starting at token i, or 0. */
const timeAt = (tokens: ReadonlyArray<Token>, i: number): number => {
  const t = tokens[i]
  if (t === undefined) return 0
  const next = tokens[i + 1]
  if (relativeWords.has(t.lower) && next !== undefined) {
    if (periodUnits.has(next.lower) || isYear(next)) return 2
    const after = tokens[i + 2]
    if (isNumber(next) && after !== undefined && periodUnits.has(after.lower)) return 3
  }
  if (isYear(t) || isQuarter(t)) return next !== undefined && isYear(next) ? 2 : 1
  if (isMonth(t)) return next !== undefined && isYear(next) ? 2 : 1
  if (timeWords.has(t.lower)) return 1
  if (t.lower === "year" && next?.lower === "to" && tokens[i + 2]?.lower === "date") return 3
  if (t.lower === "right" && next?.lower === "now") return 2
  return 0
}

/** Tokens carry an upper-case letter (`Denver`, `iOS`, `JFK`); the pronoun "I" does not count. */
const isCapitalized = (t: Token) => /\p{Lu}/u.test(t.text) && t.text !== "I"
const isCode = (t: Token) => /^[A-Z0-9]{2,5}$/.test(t.text) && /[A-Z]/.test(t.text)

interface Piece {
  readonly tokens: ReadonlyArray<Token>
  readonly kind: Kind
  readonly detail?: string
}

/** Splits stored values and capitalized names out of a chunk of content tokens. */
const splitValues = (chunk: ReadonlyArray<Token>, kind: Kind, hints: Hints, first: Token | undefined): Array<Piece> => {
  const maxN = Math.min(5, chunk.length)
  // Longest stored value first.
  for (let n = maxN; n >= 1; n--) {
    for (let i = 0; i + n <= chunk.length; i++) {
      const span = chunk.slice(i, i + n)
      const head = span[0]
      const last = span[span.length - 1]
      if (head === undefined || last === undefined) continue
      if (n === 1 && !isCapitalized(head) && head.lower.length < 4) continue
      if (Tokens.isStopword(head.lower) || Tokens.isStopword(last.lower)) continue
      const text = span.map((t) => t.text).join(" ")
      if (!hints.isValue(text)) continue
      // A lower-case word that happens to be a value ("network", "carrier") is split off only as
      // the chunk's leading modifier ("widebody aircraft"), and never out of a field's own name.
      if (!span.some(isCapitalized) && n < chunk.length) {
        if (i > 0 || hints.isName?.(chunk.map((t) => t.text).join(" ")) === true) continue
      }
      return [
        ...splitValues(chunk.slice(0, i), kind, hints, first),
        { tokens: span, kind: "filter", detail: "matches a stored value" },
        ...splitValues(chunk.slice(i + n), kind, hints, first)
      ]
    }
  }
  // Then runs of capitalized words (not the question's first word unless it is a code), unless
  // the chunk is a field's name as written ("total MRR" for `total_mrr`, "ED admit rate").
  const whole = chunk.length > 1 && hints.isName?.(chunk.map((t) => t.text).join(" ")) === true
  for (let i = 0; i < chunk.length && !whole; i++) {
    const t = chunk[i]
    if (t === undefined || !isCapitalized(t) || (t === first && !isCode(t))) continue
    let j = i + 1
    while (j < chunk.length && chunk[j] !== undefined && isCapitalized(chunk[j] as Token)) j++
    const span = chunk.slice(i, j)
    const detail = span.length === 1 && isCode(t) ? "code" : "proper name"
    return [
      ...splitValues(chunk.slice(0, i), kind, hints, undefined),
      { tokens: span, kind: "filter", detail },
      ...splitValues(chunk.slice(j), kind, hints, first)
    ]
  }
  const content = trim(chunk)
  return content.length === 0 ? [] : [{ tokens: content, kind }]
}

/** Trims connectors and articles from both ends of a piece. */
const trim = (tokens: ReadonlyArray<Token>): ReadonlyArray<Token> => {
  let a = 0
  let b = tokens.length
  while (a < b && Tokens.isStopword(tokens[a]?.lower ?? "")) a++
  while (b > a && Tokens.isStopword(tokens[b - 1]?.lower ?? "")) b--
  return tokens.slice(a, b)
}

/**
 * Splits a question into phrases, in question order. Content words between function words form
 * a chunk; `of`/`on` between two content words keep them together ("route network on a map");
 * a chunk after by/per/across/each is a group-by; time expressions ("2024", "last winter", "last
 * twelve months") are phrases of their own; quoted text, capitalized names, codes and stored
 * values (through `hints`) become filter phrases.
 */
export const extract = (question: string, hints: Hints = noHints): Array<Phrase> => {
  const pieces: Array<Piece> = []
  // Quoted text is a value as typed.
  const quoted = /"([^"]+)"|“([^”]+)”|'([^']{2,})'(?![a-z])/g
  const tokens: Array<Token> = []
  const quotedSpans: Array<{ start: number; end: number; text: string }> = []
  let last = 0
  for (const m of question.matchAll(quoted)) {
    const inner = m[1] ?? m[2] ?? m[3] ?? ""
    if (m.index > 0 && /[\p{L}\p{N}]/u.test(question[m.index - 1] ?? "")) continue
    tokens.push(...tokenize(question.slice(last, m.index), last))
    quotedSpans.push({ start: m.index + 1, end: m.index + 1 + inner.length, text: inner })
    last = m.index + m[0].length
  }
  tokens.push(...tokenize(question.slice(last), last))
  tokens.sort((x, y) => x.start - y.start)
  const first = tokens.find((t) => t.start === Math.min(...tokens.map((u) => u.start)))

  const gapBreaks = (a: Token, b: Token) => {
    const gap = question.slice(a.end, b.start)
    return /[,;:?!()[\]]/.test(gap) || quotedSpans.some((q) => q.start >= a.end && q.end <= b.start)
  }

  // Length of the longest stored value (two to five tokens, unbroken) starting at token i, or 0.
  const valueAt = (i: number): number => {
    for (let n = Math.min(5, tokens.length - i); n >= 2; n--) {
      const span = tokens.slice(i, i + n)
      const head = span[0]
      const tail = span[span.length - 1]
      if (head === undefined || tail === undefined || span.some((t, k) => k > 0 && gapBreaks(span[k - 1] as Token, t))) continue
      if (hints.isValue(question.slice(head.start, tail.end))) return n
    }
    return 0
  }

  let chunk: Array<Token> = []
  let chunkKind: Kind = "entity"
  let pendingGroup = false
  const flush = () => {
    const content = trim(chunk)
    if (content.length > 0) pieces.push(...splitValues(content, chunkKind, hints, first))
    chunk = []
    chunkKind = "entity"
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token
    const prev = tokens[i - 1]
    if (prev !== undefined && gapBreaks(prev, t)) {
      flush()
      pendingGroup = false
    }
    const time = timeAt(tokens, i)
    // A stored value that starts like a date ("April 2024 Hailstorm") is a value, not a time.
    const value = time > 0 ? valueAt(i) : 0
    if (value > 0) {
      flush()
      pieces.push({ tokens: tokens.slice(i, i + value), kind: "filter", detail: "matches a stored value" })
      i += value - 1
      pendingGroup = false
      continue
    }
    if (time > 0) {
      flush()
      pieces.push({ tokens: tokens.slice(i, i + time), kind: "time" })
      i += time - 1
      pendingGroup = false
      continue
    }
    if (Tokens.isStopword(t.lower)) {
      // `of`/`on` (with an article) between content words joins them.
      if (chunk.length > 0 && connectors.has(t.lower)) {
        let j = i + 1
        while (j < tokens.length && articles.has(tokens[j]?.lower ?? "")) j++
        const next = tokens[j]
        if (next !== undefined && !Tokens.isStopword(next.lower) && timeAt(tokens, j) === 0 && !gapBreaks(t, next)) {
          chunk.push(...tokens.slice(i, j))
          i = j - 1
          continue
        }
      }
      flush()
      if (groupMarkers.has(t.lower)) pendingGroup = true
      continue
    }
    if (chunk.length === 0) {
      chunkKind = pendingGroup ? "group_by" : "entity"
      pendingGroup = false
    }
    chunk.push(t)
  }
  flush()

  const phrases: Array<Phrase> = []
  const seen = new Set<string>()
  const add = (start: number, end: number, kind: Kind, detail?: string) => {
    const text = question.slice(start, end)
    const key = text.toLowerCase()
    if (text.trim() === "" || seen.has(key)) return
    seen.add(key)
    phrases.push({ text, kind, description: describe(kind, detail) })
  }
  const ordered: Array<{ start: number; end: number; kind: Kind; detail?: string }> = []
  for (const piece of pieces) {
    const head = piece.tokens[0]
    const tail = piece.tokens[piece.tokens.length - 1]
    if (head === undefined || tail === undefined) continue
    let kind = piece.kind
    if (kind !== "filter" && kind !== "time" && piece.tokens.every((t) => grainWords.has(t.lower) || periodUnits.has(t.lower))) {
      kind = "grain"
    }
    ordered.push({ start: head.start, end: tail.end, kind, ...(piece.detail === undefined ? {} : { detail: piece.detail }) })
  }
  for (const q of quotedSpans) ordered.push({ start: q.start, end: q.end, kind: "filter", detail: "quoted" })
  ordered.sort((x, y) => x.start - y.start)
  for (const o of ordered) add(o.start, o.end, o.kind, o.detail)
  return phrases
}
