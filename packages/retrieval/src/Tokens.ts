/**
 * Words of questions, entity names and docs, made comparable: identifiers are split at
 * snake_case and camelCase boundaries, everything is lower-cased, function words are dropped,
 * common modeling abbreviations are expanded (`avg`, `pct`, `mfr`) and words are lightly stemmed
 * so "sources" meets `traffic_source` and "monthly" meets `month`.
 */

/** English function words, question words and generic request verbs: never matched to entities. */
const stopwordList = [
  "a", "an", "the", "and", "or", "but", "nor", "of", "in", "on", "at", "to", "for", "from", "into", "onto", "with",
  "without", "within", "by", "per", "over", "under", "about", "above", "below", "between", "across", "through",
  "during", "since", "until", "than", "then", "as", "via", "up", "down", "out", "off", "each", "every", "all", "any",
  "some", "no", "not", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "doing",
  "have", "has", "had", "having", "will", "would", "shall", "should", "can", "could", "may", "might", "must",
  "i", "me", "my", "mine", "we", "us", "our", "ours", "you", "your", "he", "him", "his", "she", "her", "it", "its",
  "they", "them", "their", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose",
  "when", "where", "why", "how", "much", "many", "more", "most", "less", "least", "very", "so", "too", "just", "only",
  "also", "again", "ever", "even", "still", "yet", "s", "t", "d", "ll", "re", "ve", "m", "whats", "what's", "let",
  "lets", "let's", "show", "shows", "showing", "give", "gives", "tell", "find", "get", "got", "see", "look",
  "looks", "looking", "like", "want", "wanted", "need", "please", "compare", "compared", "comparing", "versus", "vs", "draw",
  "display", "plot", "chart", "make", "made", "going", "go", "come", "end", "ended", "bring", "brought", "data", "against",
  "dataset", "information", "info", "kind", "kinds", "sort",
  "thing", "things", "stuff", "one", "ones", "overall", "biggest", "largest", "smallest", "highest", "lowest", "top",
  "bottom", "best", "worst", "right", "now", "currently", "current", "today", "ok", "okay", "if", "whether",
  "either", "both", "other", "another", "same", "such", "own", "way", "ways", "use", "used", "using", "able"
]

const stopwords = new Set(stopwordList)

/** True for a function word or generic request word. */
export const isStopword = (word: string): boolean => stopwords.has(word.toLowerCase())

/** Abbreviations modelers use in identifiers, expanded before stemming (entity names only). */
const abbreviations: Readonly<Record<string, string>> = {
  avg: "average", pct: "percent", perc: "percent", num: "number", qty: "quantity", amt: "amount", dept: "department",
  mfr: "manufacturer", mfg: "manufacturer", dep: "departure", arr: "arrival", dest: "destination", desc: "description",
  cnt: "count", yr: "year", mo: "month", dt: "date", ts: "timestamp", addr: "address", cust: "customer",
  acct: "account", txn: "transaction", rev: "revenue", pax: "passenger", tz: "timezone", lat: "latitude",
  lon: "longitude", lng: "longitude", min: "minute", mins: "minute", sec: "second", hr: "hour", hrs: "hour",
  utm: "campaign", sku: "product", cat: "category", prod: "product", inv: "inventory", dc: "warehouse"
}

/** Expands a modeling abbreviation (`avg` → `average`); other words are returned unchanged. */
export const expandAbbreviation = (word: string): string => abbreviations[word] ?? word

/** Irregular forms the suffix rules get wrong or should unify. */
const irregular: Readonly<Record<string, string>> = {
  monthly: "month", weekly: "week", daily: "day", yearly: "year", annual: "year", annually: "year",
  quarterly: "quarter", hourly: "hour", percentage: "percent", percentages: "percent", children: "child",
  men: "man", women: "woman", people: "person", bought: "buy", sold: "sell", sales: "sale", flew: "fly",
  flown: "fly", flies: "fly", left: "leave", went: "go", data: "data", analyses: "analysis", status: "status",
  bus: "bus", gas: "gas", series: "series", news: "news", canceled: "cancel", cancelled: "cancel",
  cancelling: "cancel", canceling: "cancel", cancellation: "cancel", cancellations: "cancel",
  // Irregular past forms analysts use of amounts and events.
  paid: "pay", spent: "spend", lost: "lose", won: "win", held: "hold", written: "write", wrote: "write",
  took: "take", taken: "take", gave: "give", given: "give", drove: "drive", driven: "drive", rode: "ride",
  sent: "send", built: "build", kept: "keep", met: "meet", grew: "grow", grown: "grow", fell: "fall",
  fallen: "fall", rose: "rise", risen: "rise", chose: "choose", chosen: "choose", broke: "break",
  broken: "break", stole: "steal", stolen: "steal", owed: "owe", owing: "owe", created: "create",
  creating: "create", hired: "hire", hiring: "hire"
}

/**
 * The silent `e` a stripped `-ing`/`-ed` took with it, put back so the stem meets the base word
 * (`pricing` and `priced` meet `price`, `rated` meets `rate`): after `at`/`bl`/`iz` preceded by a
 * consonant (`located`), after `uc`, `rc`, `nc`, `rg`, `dg`, a single `v` or a consonant + `ul`
 * (`produced`, `sourced`, `balanced`, `charged`, `received`, `scheduled`), and after one syllable
 * ending consonant–vowel–consonant other than w, x, y (`rat`, `clos`, `writ`; Porter's rule).
 */
const restoreE = (base: string): string =>
  /([^aeiou](at|bl|iz)|uc|[rn]c|[rd]g|[^v]v|[^aeiouf]ul)$/.test(base) || /^[^aeiou]*[aeiou][^aeiouwxy]$/.test(base)
    ? `${base}e`
    : base

/**
 * A light stemmer: plural `-ies`/`-es`/`-s`, `-ing` and `-ed` are removed when a stem of three
 * letters or more remains. Deliberately weaker than Porter, so stems stay real words that the
 * word-vector table knows.
 */
export const stem = (word: string): string => {
  const w = word.toLowerCase()
  const known = irregular[w]
  if (known !== undefined) return known
  if (w.length <= 3 || /\d/.test(w)) return w
  if (w.endsWith("ies") && w.length > 4) return w.slice(0, -3) + "y"
  if (/(ss|us|is)$/.test(w)) return w
  if (/(ches|shes|xes|sses|zes)$/.test(w)) return w.slice(0, -2)
  if (w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1)
  if (w.endsWith("ing") && w.length > 5) {
    const base = w.slice(0, -3)
    return /([^aeiou])\1$/.test(base) && !/(ll|ss)$/.test(base) ? base.slice(0, -1) : restoreE(base)
  }
  if (w.endsWith("ied") && w.length > 4) return w.slice(0, -3) + "y"
  if (w.endsWith("ed") && w.length > 4) {
    const base = w.slice(0, -2)
    if (/([^aeiou])\1$/.test(base) && !/(ll|ss)$/.test(base)) return base.slice(0, -1)
    return restoreE(base)
  }
  return w
}

/**
 * Splits text into lower-case words: at any non-alphanumeric character, at snake_case
 * underscores, and at camelCase and letter/digit boundaries (`avgDelay2024` → avg, delay, 2024).
 */
export const words = (text: string): Array<string> =>
  text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])(\d)/g, "$1 $2")
    .replace(/(\d)([A-Za-z])/g, "$1 $2")
    .toLowerCase()
    .replace(/['’]s\b/g, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "")

/** Content terms of free text (questions, docs): words without stopwords, stemmed. */
export const terms = (text: string): Array<string> => words(text).filter((w) => !stopwords.has(w)).map(stem)

/** Content terms of an identifier: words with abbreviations expanded, without stopwords, stemmed. */
export const nameTerms = (identifier: string): Array<string> =>
  words(identifier).map(expandAbbreviation).filter((w) => !stopwords.has(w)).map(stem)

/**
 * The initialisms an identifier's words spell (`annual_run_rate` → `arr`, `average_length_of_stay`
 * → `alos` and `als`): the first letters of its words with abbreviations expanded, with and
 * without function words; only of names of two or more words, three to five letters long.
 */
export const initialisms = (identifier: string): Array<string> => {
  const all = words(identifier).map(expandAbbreviation).filter((w) => !/^\d/.test(w))
  if (all.length < 2) return []
  const out = new Set<string>()
  for (const list of [all, all.filter((w) => !stopwords.has(w))]) {
    const initials = list.map((w) => w[0] ?? "").join("")
    if (initials.length >= 3 && initials.length <= 5) out.add(initials)
  }
  return [...out]
}

/** Words of the text written as acronyms (`ARR`, `KPIs`), lower-cased and without a plural `s`. */
export const acronyms = (text: string): Array<string> =>
  [...text.matchAll(/(?<![\p{L}\p{N}])([A-Z]{3,5})s?(?![\p{L}\p{N}])/gu)].map((m) => (m[1] ?? "").toLowerCase())

/** A value's comparable form: lower-case, with runs of punctuation and spaces made one space. */
export const normalize = (text: string): string =>
  text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()

/** A content word: its stem (for lexical matching) and its surface form (for word vectors). */
export interface Term {
  readonly term: string
  readonly word: string
}

/** Content words of free text (`identifier: false`) or of an identifier (abbreviations expanded). */
export const analyze = (text: string, identifier = false): Array<Term> => {
  const out: Array<Term> = []
  for (const raw of words(text)) {
    const word = identifier ? expandAbbreviation(raw) : raw
    if (stopwords.has(word)) continue
    out.push({ term: stem(word), word })
  }
  return out
}

/**
 * Words that make an identifier a handle rather than a concept (`carrier_name`, `carrier_code`,
 * `total_seats`): they count little when asking how much of an entity's name a phrase covers.
 */
export const genericNameWords: ReadonlySet<string> = new Set([
  "name", "code", "id", "key", "total", "count", "sum", "number", "num", "label", "flag", "title"
])
