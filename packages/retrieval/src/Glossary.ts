/**
 * A small business-analytics glossary: groups of interchangeable metrics terms that the word
 * vectors rate low because general text rarely uses them as synonyms ("churn" and "cancellation",
 * "headcount" and "employees", "hospitalizations" and "admissions"). It is general vocabulary of
 * sales, finance, SaaS, retail, operations, HR, healthcare, logistics, marketing and support
 * reporting, not the names of any particular model.
 *
 * A phrase word in a group matches the words of the group's other terms at `similarity` (a
 * calibrated similarity, what a 0.8 cosine gives), as an extra meaning signal next to the
 * vectors'. A term of several words ("accounts receivable") takes part only when the phrase holds
 * all its words; as a partner, its words each match, except handle words (`genericWords`) that
 * would link a synonym to every field holding them (`customer`, `cost`, `rate`).
 *
 * To extend it, add a group (or a term to a group) whose terms an analyst would use for the same
 * measure or thing in any model; keep terms specific (no everyday words such as "time" or
 * "people") and avoid words with another common meaning in other domains.
 */
import * as Semantic from "./Semantic.ts"
import * as Tokens from "./Tokens.ts"

/** Calibrated similarity of a word to the words of its group's other terms: a 0.8 cosine. */
export const similarity = Semantic.calibrate(0.8)

/** Groups of interchangeable terms, by domain. Words are stemmed like question words. */
export const groups: ReadonlyArray<ReadonlyArray<string>> = [
  // Sales and revenue
  ["revenue", "sales", "takings"],
  ["profit", "earnings", "net income", "margin"],
  ["cost", "expense", "expenditure", "spend", "spending", "outlay"],
  ["discount", "markdown", "rebate", "price reduction"],
  ["refund", "reimbursement", "chargeback"],
  ["order", "purchase", "transaction"],
  ["customer", "client", "buyer", "shopper", "account", "patron", "consumer"],
  ["vendor", "supplier", "seller", "merchant"],
  ["product", "item", "sku", "merchandise"],
  ["quantity", "units"],
  ["store", "shop", "outlet", "branch"],
  ["region", "territory", "zone", "district"],
  ["deal", "opportunity"],
  ["lead", "prospect"],
  ["pipeline", "funnel"],
  ["quota", "target", "goal", "objective"],
  ["salesperson", "salesman", "saleswoman", "sales rep"],
  // Finance
  ["accounts receivable", "receivables", "outstanding balance", "unpaid invoice", "amount owed", "arrears"],
  ["accounts payable", "payables", "vendor bill"],
  ["invoice", "bill", "billing"],
  ["payment", "remittance"],
  ["debt", "liability", "borrowing", "loan", "indebtedness"],
  ["budget", "allocation", "allowance"],
  ["forecast", "projection", "prediction", "estimate"],
  ["tax", "levy", "vat"],
  ["dividend", "payout"],
  ["fee", "charge", "surcharge"],
  ["ltv", "clv", "lifetime value"],
  ["overdue", "past due", "delinquent", "late payment"],
  // SaaS and subscriptions
  ["churn", "attrition", "cancellation", "defection"],
  ["retention", "renewal"],
  ["subscription", "membership"],
  ["subscriber", "member"],
  ["plan", "tier", "edition"],
  ["signup", "registration", "enrollment", "enrolment"],
  ["upgrade", "upsell", "expansion"],
  ["downgrade", "contraction"],
  ["seat", "license", "licence"],
  ["usage", "utilization", "utilisation", "consumption"],
  // Marketing and web
  ["campaign", "promotion", "promo"],
  ["advertising", "ads", "advert", "advertisement"],
  ["session", "visit"],
  ["visitor", "traffic"],
  ["referral", "referrer"],
  // Support
  ["ticket", "incident", "support case"],
  ["complaint", "grievance"],
  ["satisfaction", "csat"],
  ["backlog", "queue"],
  ["agent", "representative", "rep"],
  // HR
  ["employee", "staff", "worker", "personnel", "headcount", "head count", "workforce", "fte"],
  ["attrition", "turnover", "separation", "resignation", "termination"],
  ["hire", "hiring", "recruit", "recruitment"],
  ["salary", "wage", "compensation", "payroll"],
  ["manager", "supervisor"],
  ["tenure", "seniority"],
  ["absence", "absenteeism"],
  ["department", "division"],
  ["applicant", "candidate"],
  // Healthcare
  ["admission", "admit", "hospitalization", "hospitalisation", "inpatient stay"],
  ["readmission", "readmit", "rehospitalization", "bounce back"],
  ["physician", "doctor", "clinician"],
  ["diagnosis", "dx"],
  ["procedure", "surgery", "surgical"],
  ["emergency", "er", "ed", "casualty"],
  ["occupancy", "census"],
  ["mortality", "death", "fatality", "deceased"],
  ["prescription", "medication", "drug", "medicine", "rx"],
  ["appointment", "consultation", "visit"],
  ["insurance", "insurer", "payer", "payor", "coverage"],
  ["wait", "waiting", "delay"],
  ["outpatient", "ambulatory"],
  // Logistics
  ["shipment", "delivery", "consignment", "parcel"],
  ["carrier", "courier", "shipper", "hauler"],
  ["freight", "cargo"],
  ["warehouse", "depot", "storehouse", "fulfillment center", "distribution center"],
  ["late", "delay", "tardy", "overdue"],
  ["route", "lane"],
  ["vehicle", "truck", "lorry", "van"],
  ["fuel", "diesel", "petrol", "gasoline"],
  ["distance", "mileage"],
  // Retail and inventory
  ["inventory", "stock", "stockpile"],
  ["stockout", "backorder"],
  ["shrinkage", "shrink", "spoilage"],
  ["return", "returned item", "refund request"],
  ["basket", "cart"],
  // Operations and manufacturing
  ["defect", "fault", "flaw", "reject"],
  ["downtime", "outage"],
  ["uptime", "availability"],
  ["throughput", "output", "production"],
  ["scrap", "waste"],
  ["maintenance", "repair", "servicing"],
  ["incident", "accident", "injury"]
]

/** Words of multi-word partner terms that do not carry the term: matching them alone would link too much. */
const genericWords: ReadonlySet<string> = new Set(
  [
    ...Tokens.genericNameWords,
    "account", "customer", "cost", "rate", "amount", "value", "time", "day", "date", "average", "percent",
    "line", "center", "service", "case", "price", "item", "request", "view", "staff", "stay", "sales", "net",
    "from", "hospital", "vendor", "support", "back", "payment", "past", "head", "bounce"
  ].map((w) => Tokens.stem(w))
)

interface Entry {
  readonly group: number
  readonly terms: ReadonlyArray<string>
}

const entries: ReadonlyArray<Entry> = groups.flatMap((group, g) =>
  group.flatMap((text): Array<Entry> => {
    const terms = [...new Set(Tokens.terms(text))]
    return terms.length === 0 ? [] : [{ group: g, terms }]
  })
)

const byGroup: ReadonlyArray<ReadonlyArray<Entry>> = groups.map((_, g) => entries.filter((e) => e.group === g))

const byTerm: ReadonlyMap<string, ReadonlyArray<Entry>> = (() => {
  const out = new Map<string, Array<Entry>>()
  for (const e of entries) {
    for (const t of e.terms) {
      const list = out.get(t)
      if (list === undefined) out.set(t, [e])
      else list.push(e)
    }
  }
  return out
})()

/**
 * For each term (stem) of a phrase, the stems the glossary makes it interchangeable with: the
 * words of the other terms of every group holding a term whose words the phrase all holds
 * (handle words of multi-word partners left out). Empty sets for words the glossary does not hold.
 */
export const related = (phraseTerms: ReadonlyArray<string>): Array<ReadonlySet<string>> => {
  const present = new Set(phraseTerms)
  return phraseTerms.map((t) => {
    const out = new Set<string>()
    for (const entry of byTerm.get(t) ?? []) {
      if (!entry.terms.every((w) => present.has(w))) continue
      for (const partner of byGroup[entry.group] ?? []) {
        if (partner === entry) continue
        for (const w of partner.terms) {
          if (entry.terms.includes(w) || (partner.terms.length > 1 && genericWords.has(w))) continue
          out.add(w)
        }
      }
    }
    return out
  })
}
