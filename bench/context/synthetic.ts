/**
 * A generated semantic model for the get_context benchmark: a deterministic (seeded) model of
 * `entities` entities in sources of 40 (the source, 22 dimensions, 10 measures, 3 views, 2 joins
 * and 2 joined dimensions) named and documented with English business words, and the rows its
 * value queries return: per source a tagged dimension of 300 values (cities, product names or
 * codes) and an untagged one of 100 (kept: at most `autoValueCap`); the other untagged string
 * dimensions return 101 values and are dropped as too diverse, like free-text columns.
 * Questions are generated from the same words, with values, misspellings and off-topic ones.
 */
import type { SemanticRuntime } from "@modelgate/core"

/** mulberry32: a small deterministic PRNG. */
const prng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const businessNouns = [
  "customer", "order", "invoice", "payment", "shipment", "supplier", "vendor", "product", "warehouse", "store",
  "employee", "contract", "account", "campaign", "lead", "opportunity", "ticket", "subscription", "refund", "return",
  "claim", "policy", "loan", "transaction", "budget", "expense", "asset", "project", "task", "session", "visit",
  "booking", "reservation", "flight", "trip", "route", "driver", "vehicle", "delivery", "parcel", "inventory",
  "stock", "branch", "region", "territory", "partner", "merchant", "survey", "review", "complaint", "patient",
  "appointment", "prescription", "course", "student", "enrollment", "property", "listing", "lease", "tenant"
]
const measureNouns = [
  "revenue", "cost", "margin", "profit", "discount", "tax", "fee", "price", "amount", "balance", "quantity",
  "weight", "distance", "duration", "delay", "rating", "score", "volume", "commission", "salary", "bonus",
  "premium", "interest", "spend", "budget", "churn", "retention", "conversion", "utilization", "capacity"
]
const qualifiers = [
  "gross", "net", "average", "total", "median", "annual", "monthly", "daily", "expected", "actual", "planned",
  "estimated", "refunded", "outstanding", "overdue", "billed", "paid", "unpaid", "active", "lifetime"
]
const attributeNouns = [
  "status", "type", "category", "segment", "tier", "channel", "source", "city", "country", "state", "zone",
  "language", "currency", "brand", "model", "color", "size", "department", "team", "manager", "owner", "priority",
  "stage", "method", "carrier", "provider", "plan", "level", "grade", "class", "group", "industry", "sector"
]
const docVerbs = ["recorded", "reported", "billed", "measured", "assigned", "captured", "tracked", "computed"]
const cities = [
  "New York", "Los Angeles", "Chicago", "Houston", "Phoenix", "Philadelphia", "San Antonio", "San Diego", "Dallas",
  "San Jose", "Austin", "Jacksonville", "Fort Worth", "Columbus", "Charlotte", "Indianapolis", "San Francisco",
  "Seattle", "Denver", "Washington", "Boston", "El Paso", "Nashville", "Detroit", "Oklahoma City", "Portland",
  "Las Vegas", "Memphis", "Louisville", "Baltimore", "Milwaukee", "Albuquerque", "Tucson", "Fresno", "Sacramento",
  "Kansas City", "Mesa", "Atlanta", "Omaha", "Colorado Springs", "Raleigh", "Long Beach", "Virginia Beach", "Miami",
  "Oakland", "Minneapolis", "Tulsa", "Bakersfield", "Wichita", "Arlington", "Aurora", "Tampa", "New Orleans",
  "Cleveland", "Honolulu", "Anaheim", "Lexington", "Stockton", "Corpus Christi", "Henderson", "Riverside", "Newark",
  "Saint Paul", "Santa Ana", "Cincinnati", "Irvine", "Orlando", "Pittsburgh", "St. Louis", "Greensboro",
  "Jersey City", "Anchorage", "Lincoln", "Plano", "Durham", "Buffalo", "Chandler", "Chula Vista", "Toledo",
  "Madison", "Gilbert", "Reno", "Fort Wayne", "North Las Vegas", "St. Petersburg", "Lubbock", "Irving", "Laredo",
  "Winston-Salem", "Chesapeake", "Glendale", "Garland", "Scottsdale", "Norfolk", "Boise", "Fremont", "Spokane",
  "Santa Clarita", "Baton Rouge", "Richmond", "Hialeah", "San Bernardino", "Tacoma", "Modesto", "Huntsville",
  "Des Moines", "Yonkers", "Rochester", "Moreno Valley", "Fayetteville", "Fontana", "Columbus", "Worcester",
  "Port St. Lucie", "Little Rock", "Augusta", "Oxnard", "Birmingham", "Montgomery", "Frisco", "Amarillo",
  "Salt Lake City", "Grand Rapids", "Huntington Beach", "Overland Park", "Glendale", "Tallahassee", "Grand Prairie",
  "McKinney", "Cape Coral", "Sioux Falls", "Peoria", "Providence", "Vancouver", "Knoxville", "Akron", "Shreveport",
  "Mobile", "Brownsville", "Newport News", "Fort Lauderdale", "Chattanooga", "Tempe", "Aurora", "Santa Rosa",
  "Eugene", "Elk Grove", "Salem", "Ontario", "Cary", "Rancho Cucamonga", "Oceanside", "Lancaster", "Garden Grove",
  "Pembroke Pines", "Fort Collins", "Palmdale", "Springfield", "Clarksville", "Rockford", "Alexandria", "Savannah",
  "London", "Paris", "Berlin", "Madrid", "Rome", "Amsterdam", "Brussels", "Vienna", "Zurich", "Geneva", "Munich",
  "Hamburg", "Frankfurt", "Milan", "Barcelona", "Lisbon", "Dublin", "Edinburgh", "Manchester", "Copenhagen",
  "Stockholm", "Oslo", "Helsinki", "Warsaw", "Prague", "Budapest", "Athens", "Istanbul", "Cairo", "Lagos",
  "Nairobi", "Johannesburg", "Cape Town", "Dubai", "Mumbai", "Delhi", "Bangalore", "Chennai", "Singapore",
  "Bangkok", "Jakarta", "Manila", "Hong Kong", "Shanghai", "Beijing", "Seoul", "Tokyo", "Osaka", "Sydney",
  "Melbourne", "Brisbane", "Auckland", "Toronto", "Montreal", "Calgary", "Mexico City", "Guadalajara", "Bogota",
  "Lima", "Santiago", "Buenos Aires", "Sao Paulo", "Rio de Janeiro", "Caracas", "Havana", "Kingston"
]
const brands = [
  "Acme", "Northwind", "Contoso", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay", "Soylent",
  "Tyrell", "Cyberdyne", "Aperture", "Wonka", "Gringotts", "Oscorp", "Pied Piper", "Dunder", "Massive Dynamic"
]
const productAdjectives = [
  "Alpine", "Classic", "Urban", "Trail", "Coastal", "Vintage", "Ultra", "Compact", "Deluxe", "Everyday", "Summit",
  "Harbor", "Prairie", "Velvet", "Granite", "Solar", "Arctic", "Canyon", "Meadow", "Midnight"
]
const productNouns = [
  "Jacket", "Backpack", "Sneaker", "Blender", "Lamp", "Desk", "Chair", "Kettle", "Headphones", "Watch", "Tent",
  "Bicycle", "Camera", "Notebook", "Mug", "Sofa", "Rug", "Drill", "Toaster", "Speaker", "Helmet", "Scarf", "Boots"
]
const tiers = ["Bronze", "Silver", "Gold", "Platinum", "Diamond", "Basic", "Standard", "Premium", "Enterprise", "Starter"]
const regions = ["North", "South", "East", "West", "Central", "Pacific", "Atlantic", "Mountain", "Gulf", "Coastal"]

const title = (w: string) => w.charAt(0).toUpperCase() + w.slice(1)
const plural = (w: string) => w.endsWith("y") ? `${w.slice(0, -1)}ies` : w.endsWith("s") ? `${w}es` : `${w}s`

/** A generated model, its value rows and its questions. */
export interface Synthetic {
  readonly model: SemanticRuntime.ModelInfo
  /** Rows of a value query, keyed by the value query's text. */
  readonly run: (request: SemanticRuntime.QueryRequest) => ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly questions: ReadonlyArray<string>
  /** Values the value queries keep (tagged + auto fields within the cap). */
  readonly indexedValues: number
}

/**
 * Generates the model. `valueColumn` and `countColumn` are the retrieval package's output names of
 * value queries; `autoValueCap` its cap of untagged fields.
 */
export const generate = (options: {
  readonly entities: number
  readonly seed: number
  readonly valueColumn: string
  readonly countColumn: string
  readonly autoValueCap: number
}): Synthetic => {
  const random = prng(options.seed)
  const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(random() * list.length)] as A
  const entities: Array<SemanticRuntime.ModelEntity> = []
  const rowsByField = new Map<string, ReadonlyArray<string>>()
  const sourceCount = Math.ceil(options.entities / 40)
  const sourceNames: Array<string> = []
  const nounOf = new Map<string, string>()
  while (sourceNames.length < sourceCount) {
    const noun = pick(businessNouns)
    const name = `${pick([...businessNouns, ...qualifiers])}_${plural(noun)}`
    if (nounOf.has(name)) continue
    nounOf.set(name, noun)
    sourceNames.push(name)
  }
  const valueList = (kind: number, n: number, salt: string): Array<string> => {
    const out = new Set<string>()
    let guard = 0
    while (out.size < n && guard < n * 50) {
      const i = guard++
      if (kind === 0) out.add(i < cities.length ? (cities[i] ?? pick(cities)) : `${pick(regions)} ${pick(cities)}`)
      else if (kind === 1) out.add(`${pick(brands)} ${pick(productAdjectives)} ${pick(productNouns)}`)
      else out.add(`${salt.slice(0, 2).toUpperCase()}-${Math.floor(random() * 90_000 + 10_000)}`)
    }
    return [...out]
  }
  const questions: Array<string> = []
  let values = 0
  for (const [s, source] of sourceNames.entries()) {
    const subject = source.split("_").slice(1).join(" ")
    const one = nounOf.get(source) ?? subject
    const doc = (text: string) => `${text} ${pick(docVerbs)} per ${one}.`
    entities.push({ kind: "source", source, name: source, path: [], dataType: "", doc: `One row per ${one} (${source.replaceAll("_", " ")}).`, tags: [] })
    const dims: Array<{ name: string; phrase: string }> = []
    const usedFields = new Set<string>()
    const field = (make: () => string) => {
      for (;;) {
        const name = make()
        if (!usedFields.has(name)) {
          usedFields.add(name)
          return name
        }
      }
    }
    // String dimensions: one tagged (300 values), one auto (100 values, kept), ten auto too diverse.
    for (let d = 0; d < 12; d++) {
      const noun = pick(businessNouns)
      const attribute = d === 0 ? pick(["city", "product", "code"]) : pick(attributeNouns)
      const name = field(() => `${noun}_${d === 0 ? attribute : pick(attributeNouns)}`)
      const words = name.replaceAll("_", " ")
      const tagged = d === 0
      entities.push({ kind: "dimension", source, name, path: [], dataType: "string", doc: doc(`The ${words} of the ${subject}`), tags: tagged ? ["index_values"] : [] })
      dims.push({ name, phrase: words })
      const kind = tagged ? (attribute === "city" ? 0 : attribute === "product" ? 1 : 2) : d === 1 ? 1 : 2
      const list = tagged
        ? valueList(kind, 300, name)
        : d === 1
        ? valueList(0, options.autoValueCap, name).map((v, i) => i % 2 === 0 ? v : `${pick(tiers)} ${pick(regions)} ${i}`)
        : valueList(2, options.autoValueCap + 1, name)
      rowsByField.set(`${source}.${name}`, list)
      if (tagged || d === 1) values += list.length
    }
    for (let d = 0; d < 6; d++) {
      const name = field(() => `${pick(measureNouns)}_${pick(["amount", "value", "rate", "units", "percent"])}`)
      entities.push({ kind: "dimension", source, name, path: [], dataType: "number", doc: d % 2 === 0 ? doc(`Raw ${name.replaceAll("_", " ")}`) : undefined, tags: [] })
    }
    for (let d = 0; d < 4; d++) {
      const name = field(() => `${pick(businessNouns)}_${pick(["created_at", "updated_at", "date", "closed_at"])}`)
      entities.push({ kind: "dimension", source, name, path: [], dataType: d % 2 === 0 ? "timestamp" : "date", doc: doc(`When the ${name.split("_")[0]} happened`), tags: [] })
    }
    const measures: Array<string> = []
    for (let m = 0; m < 10; m++) {
      let q = ""
      let noun = ""
      const name = field(() => {
        q = pick(qualifiers)
        noun = pick(measureNouns)
        return `${q}_${noun}${m > 5 ? `_${pick(["usd", "pct", "per_unit"])}` : ""}`
      })
      entities.push({ kind: "measure", source, name, path: [], dataType: "number", doc: doc(`${title(q)} ${noun} across ${subject}`), tags: [] })
      measures.push(name.replaceAll("_", " "))
    }
    for (let v = 0; v < 3; v++) {
      const name = field(() => `${pick(["by", "top", "trend_of"])}_${pick(attributeNouns)}`)
      entities.push({ kind: "view", source, name, path: [], dataType: "", doc: doc(`${title(name.replaceAll("_", " "))} view`), tags: [] })
    }
    for (let j = 0; j < 2; j++) {
      const target = sourceNames[(s + 1 + j * 7) % sourceNames.length] ?? source
      const base = target.split("_").slice(-1)[0] ?? target
      const join = field(() => usedFields.has(base) ? `${pick(qualifiers)}_${base}` : base)
      entities.push({ kind: "join", source, name: join, path: [], dataType: "", doc: `The ${join} of the ${subject}.`, tags: [] })
      entities.push({ kind: "dimension", source, name: `${pick(businessNouns)}_${pick(attributeNouns)}`, path: [join], dataType: "string", doc: undefined, tags: [] })
    }
    // Questions about this source, from its words and values.
    if (s % 3 === 0) {
      const tagged = dims[0]
      const value = pick(rowsByField.get(`${source}.${tagged?.name ?? ""}`) ?? ["Denver"])
      const measure = pick(measures)
      const dim = pick(dims.slice(1))
      const typo = (v: string) => v.length > 6 ? `${v.slice(0, 3)}${v.slice(4)}` : v
      questions.push(
        `${title(measure)} by ${dim?.phrase ?? "status"}`,
        `How many ${subject} in ${value} last year?`,
        `${measure} for ${typo(value)} by ${dim?.phrase ?? "status"}`,
        `which ${dim?.phrase ?? "status"} has the highest ${measure.split(" ").slice(-1)[0] ?? "revenue"} this quarter`,
        `compare the ${measure} and ${pick(measures)} of ${subject} from ${value} and ${pick(cities)} for every ${dim?.phrase ?? "status"} and ${pick(attributeNouns)} over the last twelve months`,
        `${pick(qualifiers)} ${pick(measureNouns)} ${pick(businessNouns)} ${pick(attributeNouns)} ${pick(businessNouns)} ${pick(measureNouns)} trend`
      )
    }
  }
  questions.push(
    "best recipe for sourdough bread", "what will the weather be tomorrow in Paris", "who won the world cup",
    "how do I reset my password", "translate hello into french"
  )
  const run = (request: SemanticRuntime.QueryRequest): ReadonlyArray<Readonly<Record<string, unknown>>> => {
    if (request._tag !== "Custom") return []
    // `run: \`source\` -> { where: \`field\` != null ...`: the source and the field's last name.
    const m = /^run: `([^`]+)` -> \{\s*where: ((?:`[^`]+`\.?)+) != null/.exec(request.query)
    if (m === null) return []
    const path = (m[2] ?? "").split(".").map((p) => p.replaceAll("`", ""))
    const list = rowsByField.get(`${m[1]}.${path.join(".")}`) ?? []
    return list.map((v, i) => ({ [options.valueColumn]: v, [options.countColumn]: 1000 - i }))
  }
  return { model: { modelPath: "generated.malloy", entities: entities.slice(0, options.entities) }, run, questions, indexedValues: values }
}
