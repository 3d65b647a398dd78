#!/usr/bin/env node
// Writes the parquet data of the held-out get_context packages (saas, hospital, insurance).
// Deterministic: each table draws from its own seeded PRNG stream and DuckDB runs on one
// thread, so a rerun gives the same rows (and the same files).
//
//   node packages/retrieval/test/heldout/generate.mjs            # rewrites saas/data, hospital/data and insurance/data
//   node packages/retrieval/test/heldout/generate.mjs --only saas --seed 7

import { DuckDBInstance, timestampValue } from '@duckdb/node-api';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const opts = { only: null, seed: 20250301 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--only') opts.only = process.argv[++i].split(',');
  else if (a === '--seed') opts.seed = Number(process.argv[++i]);
  else throw new Error(`unknown argument ${a}`);
}

// ---------------------------------------------------------------- PRNG (sfc32 seeded by FNV-1a + splitmix32)
function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}
class Rng {
  constructor(label) {
    let a = hashString(`${opts.seed}:${label}`);
    const sm = () => {
      a = (a + 0x9e3779b9) >>> 0;
      let z = a;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = sm(); this.b = sm(); this.c = sm(); this.d = sm();
    for (let i = 0; i < 12; i++) this.next();
  }
  next() {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }
  uniform(lo, hi) { return lo + (hi - lo) * this.next(); }
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p) { return this.next() < p; }
  pick(arr) { return arr[Math.floor(this.next() * arr.length)]; }
  exp(mean) { return -mean * Math.log(1 - this.next()); }
  normal(mu = 0, sigma = 1) {
    const u = 1 - this.next(), v = this.next();
    return mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  /** Picks from [[item, weight], ...]. */
  weighted(pairs) {
    const total = pairs.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [item, w] of pairs) { if ((x -= w) < 0) return item; }
    return pairs[pairs.length - 1][0];
  }
}
const round2 = (x) => Math.round(x * 100) / 100;

// ---------------------------------------------------------------- time (UTC seconds)
const DAY = 86400;
const HOUR = 3600;
const ts = (y, m, d, h = 0, mi = 0) => Date.UTC(y, m - 1, d, h, mi) / 1000;
const END = ts(2025, 1, 1);
const addMonths = (t, n) => { const d = new Date(t * 1000); d.setUTCMonth(d.getUTCMonth() + n); return d.getTime() / 1000; };
const minute = (t) => Math.floor(t / 60) * 60;

// ---------------------------------------------------------------- writing
// columns: [name, type] with type INTEGER | DOUBLE | VARCHAR | BOOLEAN | TIMESTAMP
async function writeParquet(conn, file, columns, rows) {
  const table = 'stage_' + path.basename(file, '.parquet');
  await conn.run(`CREATE OR REPLACE TABLE ${table} (${columns.map(([n, t]) => `"${n}" ${t}`).join(', ')})`);
  const app = await conn.createAppender(table);
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const v = row[i];
      if (v === null || v === undefined) { app.appendNull(); continue; }
      switch (columns[i][1]) {
        case 'INTEGER': app.appendInteger(v); break;
        case 'DOUBLE': app.appendDouble(v); break;
        case 'VARCHAR': app.appendVarchar(v); break;
        case 'BOOLEAN': app.appendBoolean(v); break;
        case 'TIMESTAMP': app.appendTimestamp(timestampValue(BigInt(Math.round(v)) * 1000000n)); break;
        default: throw new Error(`unsupported type ${columns[i][1]}`);
      }
    }
    app.endRow();
  }
  app.flushSync();
  app.closeSync();
  await conn.run(`COPY (SELECT * FROM ${table} ORDER BY "${columns[0][0]}") TO '${file.replaceAll("'", "''")}' (FORMAT PARQUET, COMPRESSION ZSTD)`);
  await conn.run(`DROP TABLE ${table}`);
  console.log(`  ${path.relative(HERE, file)}: ${rows.length} rows`);
}

// ================================================================= SAAS
// "Cloudline", a B2B workflow-and-dashboards product sold per seat, 2022-2024.
const PLANS = [
  // code, name, interval, price per seat per month, tier
  ['FREE', 'Free', 'Monthly', 0, 0],
  ['STR-M', 'Starter', 'Monthly', 12, 1], ['STR-A', 'Starter', 'Annual', 10, 1],
  ['TEAM-M', 'Team', 'Monthly', 25, 2], ['TEAM-A', 'Team', 'Annual', 20, 2],
  ['BIZ-M', 'Business', 'Monthly', 45, 3], ['BIZ-A', 'Business', 'Annual', 36, 3],
  ['ENT-A', 'Enterprise', 'Annual', 72, 4],
];
const INDUSTRIES = [['Software', 22], ['Fintech', 12], ['Healthcare', 11], ['Retail', 12], ['Manufacturing', 10],
  ['Education', 9], ['Media', 8], ['Logistics', 8], ['Nonprofit', 5], ['Government', 3]];
const REGIONS = [
  ['North America', 45, ['United States', 'United States', 'United States', 'Canada']],
  ['EMEA', 30, ['United Kingdom', 'Germany', 'France', 'Netherlands', 'Sweden', 'South Africa']],
  ['APAC', 17, ['Australia', 'Japan', 'Singapore', 'India']],
  ['LATAM', 8, ['Brazil', 'Mexico', 'Chile']],
];
const NAME_A = ['Blue', 'North', 'Bright', 'Iron', 'Silver', 'Cedar', 'Summit', 'Harbor', 'Granite', 'Maple', 'Atlas',
  'Nova', 'Pioneer', 'Willow', 'Falcon', 'Copper', 'Crescent', 'Orbit', 'Redwood', 'Lumen', 'Vertex', 'Sterling'];
const NAME_B = ['Labs', 'Logistics', 'Health', 'Analytics', 'Foods', 'Robotics', 'Capital', 'Media', 'Systems', 'Works',
  'Partners', 'Retail', 'Energy', 'Learning', 'Studios', 'Freight', 'Clinics', 'Bank', 'Outfitters', 'Networks'];
const SUFFIX = ['Inc.', 'LLC', 'Ltd', 'GmbH', 'Co.', 'Group', ''];
const CANCEL_REASONS = [['Too Expensive', 30], ['Missing Features', 22], ['Switched to Competitor', 18],
  ['Company Closed', 8], ['Poor Support', 7], ['No Longer Needed', 15]];
const FEATURES = [['Dashboards', 30], ['Reports', 22], ['Workflows', 16], ['API', 12], ['Alerts', 10], ['Mobile App', 10]];
const TOPICS = [['Billing', 18], ['Login & SSO', 16], ['Integrations', 20], ['Performance', 12], ['Data Export', 10], ['Bug Report', 24]];

async function saas(conn, dir) {
  const plans = PLANS.map((p, i) => [i + 1, p[0], p[1], p[2], p[3], p[4]]);
  await writeParquet(conn, `${dir}/plans.parquet`, [['id', 'INTEGER'], ['plan_code', 'VARCHAR'], ['plan_label', 'VARCHAR'],
    ['billing_interval', 'VARCHAR'], ['seat_price_usd', 'DOUBLE'], ['tier_rank', 'INTEGER']], plans);

  const ra = new Rng('saas.accounts');
  const accounts = [];
  const usedNames = new Set();
  for (let id = 1; id <= 1500; id++) {
    let name;
    do { name = `${ra.pick(NAME_A)} ${ra.pick(NAME_B)} ${ra.pick(SUFFIX)}`.trim(); if (usedNames.has(name)) name += ` ${ra.int(2, 99)}`; } while (usedNames.has(name));
    usedNames.add(name);
    const region = ra.weighted(REGIONS.map((r) => [r, r[1]]));
    const employees = Math.max(2, Math.round(Math.exp(ra.normal(4.2, 1.5))));
    const channel = employees > 800 ? ra.weighted([['Sales-Led', 70], ['Partner Referral', 20], ['Self-Serve', 10]])
      : ra.weighted([['Self-Serve', 60], ['Sales-Led', 22], ['Partner Referral', 18]]);
    const created = minute(ts(2022, 1, 1) + ra.next() * (ts(2024, 12, 15) - ts(2022, 1, 1)));
    accounts.push([id, name, ra.weighted(INDUSTRIES), region[0], ra.pick(region[2]), employees, channel, created]);
  }
  await writeParquet(conn, `${dir}/accounts.parquet`, [['account_id', 'INTEGER'], ['company_name', 'VARCHAR'],
    ['industry_name', 'VARCHAR'], ['sales_region', 'VARCHAR'], ['hq_country', 'VARCHAR'], ['employee_count', 'INTEGER'],
    ['lead_source', 'VARCHAR'], ['created_at', 'TIMESTAMP']], accounts);

  const rs = new Rng('saas.subscriptions');
  const subs = [];
  let sid = 1;
  for (const acc of accounts) {
    const starts = [acc[7]];
    if (rs.chance(0.15)) starts.push(acc[7] + rs.int(40, 400) * DAY);
    for (const start of starts) {
      if (start >= END) continue;
      const emp = acc[5];
      const tier = emp > 1000 ? rs.weighted([[4, 50], [3, 35], [2, 15]]) : emp > 150 ? rs.weighted([[3, 40], [2, 40], [1, 10], [4, 10]])
        : rs.weighted([[0, 18], [1, 40], [2, 32], [3, 10]]);
      const options = plans.filter((p) => p[5] === tier);
      const plan = tier === 4 ? options[0] : rs.chance(tier === 0 ? 1 : 0.35) ? options[options.length - 1] : options[0];
      const seats = tier === 0 ? rs.int(1, 3) : Math.max(3, Math.min(2000, Math.round(emp * rs.uniform(0.05, 0.5))));
      const discount = tier >= 3 ? round2(rs.pick([0, 0, 0.05, 0.1, 0.15, 0.2, 0.25])) : tier === 2 ? rs.pick([0, 0, 0, 0.1]) : 0;
      const mrr = round2(seats * plan[4] * (1 - discount));
      const monthlyHazard = [0.03, 0.025, 0.014, 0.009, 0.004][tier];
      let ended = null;
      let t = start;
      while (t < END) { if (rs.chance(monthlyHazard)) { ended = minute(t + rs.int(1, 29) * DAY); break; } t = addMonths(t, 1); }
      if (ended !== null && ended >= END) ended = null;
      let status, reason = null;
      if (ended !== null) { status = 'Canceled'; reason = rs.weighted(CANCEL_REASONS); }
      else if (END - start < 21 * DAY && tier > 0) status = 'Trialing';
      else status = tier > 0 && rs.chance(0.05) ? 'Past Due' : 'Active';
      subs.push([sid++, acc[0], plan[0], start, ended, status, seats, mrr, discount, reason]);
    }
  }
  await writeParquet(conn, `${dir}/subscriptions.parquet`, [['subscription_id', 'INTEGER'], ['account_id', 'INTEGER'],
    ['plan_id', 'INTEGER'], ['started_at', 'TIMESTAMP'], ['ended_at', 'TIMESTAMP'], ['sub_status', 'VARCHAR'],
    ['seat_count', 'INTEGER'], ['mrr_usd', 'DOUBLE'], ['discount_rate', 'DOUBLE'], ['cancel_reason', 'VARCHAR']], subs);

  const ri = new Rng('saas.invoices');
  const invoices = [];
  let iid = 1;
  for (const s of subs) {
    const plan = plans[s[2] - 1];
    if (plan[4] === 0 || s[5] === 'Trialing') continue;
    const step = plan[3] === 'Annual' ? 12 : 1;
    const stop = s[4] ?? END;
    for (let t = s[3]; t < stop; t = addMonths(t, step)) {
      if (t < ts(2023, 1, 1)) continue;
      const issued = minute(t);
      const due = issued + (plan[3] === 'Annual' ? 30 : 15) * DAY;
      const amount = round2(s[7] * step * (s[4] === null && s[5] === 'Past Due' ? 1 : 1));
      let paid = null, state;
      const lag = ri.exp(plan[3] === 'Annual' ? 24 : 9);
      if (ri.chance(0.012) && due < END - 60 * DAY) state = 'Written Off';
      else if (issued + lag * DAY < END && !(s[5] === 'Past Due' && END - issued < 70 * DAY)) { paid = minute(issued + lag * DAY); state = 'Paid'; }
      else state = due < END ? 'Overdue' : 'Open';
      invoices.push([iid++, s[0], s[1], issued, due, paid, amount, state,
        ri.weighted(plan[5] >= 3 ? [['Wire', 40], ['ACH', 35], ['Credit Card', 25]] : [['Credit Card', 75], ['PayPal', 15], ['ACH', 10]])]);
    }
  }
  await writeParquet(conn, `${dir}/invoices.parquet`, [['invoice_id', 'INTEGER'], ['subscription_id', 'INTEGER'],
    ['account_id', 'INTEGER'], ['issued_at', 'TIMESTAMP'], ['due_at', 'TIMESTAMP'], ['paid_at', 'TIMESTAMP'],
    ['amount_usd', 'DOUBLE'], ['collection_state', 'VARCHAR'], ['pay_method', 'VARCHAR']], invoices);

  const rt = new Rng('saas.tickets');
  const tickets = [];
  for (let id = 1; id <= 4200; id++) {
    const acc = accounts[Math.floor(Math.pow(rt.next(), 1.6) * accounts.length)];
    const opened = minute(Math.max(acc[7], ts(2023, 1, 1)) + rt.next() * (END - Math.max(acc[7], ts(2023, 1, 1))));
    const topic = rt.weighted(TOPICS);
    const priority = rt.weighted([['Low', 25], ['Normal', 45], ['High', 22], ['Urgent', 8]]);
    const channel = priority === 'Urgent' ? rt.weighted([['Phone', 50], ['Chat', 30], ['Email', 20]]) : rt.weighted([['Email', 50], ['Chat', 38], ['Phone', 12]]);
    const tier = topic === 'Bug Report' || topic === 'Performance' ? rt.weighted([['Tier 1', 35], ['Tier 2', 35], ['Engineering', 30]])
      : rt.weighted([['Tier 1', 70], ['Tier 2', 25], ['Engineering', 5]]);
    const respMin = Math.max(1, rt.exp({ Low: 600, Normal: 240, High: 60, Urgent: 12 }[priority] * (channel === 'Chat' ? 0.2 : 1)));
    const resolveH = rt.exp({ 'Tier 1': 6, 'Tier 2': 26, Engineering: 110 }[tier]) + respMin / 60;
    const firstResp = minute(opened + respMin * 60);
    let resolved = minute(opened + resolveH * HOUR);
    if (resolved >= END) resolved = null;
    const csat = resolved !== null && rt.chance(0.42) ? Math.max(1, Math.min(5, Math.round(rt.normal(resolveH < 24 ? 4.4 : resolveH < 96 ? 3.7 : 2.8, 0.9)))) : null;
    tickets.push([id, acc[0], opened, firstResp < END ? firstResp : null, resolved, priority, topic, channel, tier, csat]);
  }
  await writeParquet(conn, `${dir}/support_tickets.parquet`, [['ticket_id', 'INTEGER'], ['account_id', 'INTEGER'],
    ['opened_at', 'TIMESTAMP'], ['first_response_at', 'TIMESTAMP'], ['resolved_at', 'TIMESTAMP'], ['priority_level', 'VARCHAR'],
    ['topic', 'VARCHAR'], ['contact_channel', 'VARCHAR'], ['support_tier', 'VARCHAR'], ['csat', 'INTEGER']], tickets);

  const ru = new Rng('saas.usage');
  const live = subs.filter((s) => plans[s[2] - 1][4] > 0);
  const events = [];
  for (let id = 1; id <= 24000; id++) {
    const s = live[Math.floor(ru.next() * live.length)];
    const from = Math.max(s[3], ts(2024, 1, 1));
    const to = s[4] ?? END;
    if (from >= to) { id--; continue; }
    const at = minute(from + ru.next() * (to - from));
    const feature = ru.weighted(plans[s[2] - 1][5] >= 3 ? FEATURES : FEATURES.filter(([f]) => f !== 'API'));
    events.push([id, s[1], s[1] * 1000 + ru.int(1, Math.min(s[6], 60)), at, feature, round2(Math.max(0.2, ru.exp(feature === 'Dashboards' ? 14 : 7)))]);
  }
  await writeParquet(conn, `${dir}/usage_events.parquet`, [['event_id', 'INTEGER'], ['account_id', 'INTEGER'],
    ['user_id', 'INTEGER'], ['occurred_at', 'TIMESTAMP'], ['feature_area', 'VARCHAR'], ['session_minutes', 'DOUBLE']], events);
}

// ================================================================= HOSPITAL
// "Riverside Health", a 300-bed community hospital with an emergency department, 2023-2024.
const COUNTIES = [['Marion', 34], ['Polk', 14], ['Linn', 12], ['Yamhill', 10], ['Benton', 9], ['Clackamas', 8], ['Lincoln', 6], ['Out of Area', 7]];
const FIRST = ['Maria', 'James', 'Linda', 'Robert', 'Ana', 'Michael', 'Susan', 'David', 'Karen', 'Jose', 'Nancy', 'Thomas',
  'Minh', 'Olga', 'Sarah', 'Daniel', 'Lupe', 'Kevin', 'Helen', 'Brian', 'Aisha', 'Carlos', 'Grace', 'Ivan'];
const LAST = ['Garcia', 'Smith', 'Nguyen', 'Johnson', 'Hernandez', 'Miller', 'Brown', 'Martinez', 'Davis', 'Lopez', 'Wilson',
  'Tran', 'Petrov', 'Anderson', 'Moore', 'Clark', 'Ramirez', 'Young', 'Walker', 'Kowalski', 'Okafor', 'Shah'];
const SPECIALTIES = [['Internal Medicine', 24], ['Cardiology', 12], ['General Surgery', 12], ['Orthopedics', 10], ['Obstetrics', 10],
  ['Pediatrics', 10], ['Neurology', 8], ['Pulmonology', 8], ['Psychiatry', 6], ['Emergency Medicine', 20], ['Family Medicine', 16]];
const WARDS = [
  // name, unit type, floor, beds
  ['MICU', 'Intensive Care', 2, 16], ['SICU', 'Intensive Care', 2, 12], ['2 East Step-Down', 'Step-Down', 2, 20],
  ['3 North', 'Medical-Surgical', 3, 34], ['3 South', 'Medical-Surgical', 3, 34], ['4 West Cardiac', 'Medical-Surgical', 4, 30],
  ['4 East Ortho/Neuro', 'Medical-Surgical', 4, 30], ['5 North', 'Medical-Surgical', 5, 32], ['Birth Center', 'Maternity', 1, 24],
  ['Mother-Baby', 'Maternity', 1, 20], ['Pediatrics 6', 'Pediatrics', 6, 18], ['Behavioral Health', 'Behavioral Health', 6, 22],
];
const DRGS = [
  // group, weight, wards, specialty, mean LOS days, charge per day, age range, readmit p, death p
  ['Heart Failure', 9, ['4 West Cardiac', '2 East Step-Down'], 'Cardiology', 4.8, 5200, [55, 95], 0.21, 0.03],
  ['Chest Pain', 8, ['4 West Cardiac'], 'Cardiology', 1.6, 6100, [35, 85], 0.06, 0.002],
  ['Sepsis', 8, ['MICU', '3 North', '3 South'], 'Internal Medicine', 6.5, 6800, [40, 95], 0.17, 0.12],
  ['Pneumonia', 9, ['3 North', '3 South', '5 North'], 'Pulmonology', 4.4, 4700, [30, 95], 0.14, 0.04],
  ['COPD', 6, ['3 South', '5 North'], 'Pulmonology', 3.9, 4500, [50, 90], 0.19, 0.02],
  ['Stroke', 5, ['4 East Ortho/Neuro', 'SICU'], 'Neurology', 5.1, 6900, [50, 95], 0.12, 0.08],
  ['Hip & Knee Replacement', 7, ['4 East Ortho/Neuro'], 'Orthopedics', 2.3, 11800, [50, 88], 0.04, 0.002],
  ['Appendectomy', 4, ['5 North', 'SICU'], 'General Surgery', 2.1, 9600, [8, 70], 0.03, 0.001],
  ['Kidney Failure', 5, ['3 North', '5 North'], 'Internal Medicine', 4.9, 5000, [45, 92], 0.18, 0.04],
  ['Vaginal Delivery', 10, ['Birth Center', 'Mother-Baby'], 'Obstetrics', 2.0, 3900, [18, 42], 0.02, 0.0],
  ['Cesarean Section', 5, ['Birth Center', 'Mother-Baby'], 'Obstetrics', 3.1, 6200, [20, 44], 0.03, 0.0],
  ['Bronchiolitis', 3, ['Pediatrics 6'], 'Pediatrics', 2.6, 4100, [0, 3], 0.05, 0.0],
  ['Major Depression', 4, ['Behavioral Health'], 'Psychiatry', 8.2, 1900, [18, 75], 0.15, 0.0],
];
const COMPLAINTS = [['Chest Pain', 12], ['Abdominal Pain', 16], ['Shortness of Breath', 10], ['Fall', 9], ['Fever', 10],
  ['Laceration', 8], ['Headache', 7], ['Back Pain', 8], ['Vomiting', 7], ['Anxiety', 5], ['Allergic Reaction', 4], ['Motor Vehicle Crash', 4]];
const ACUITY = ['ESI 1 - Resuscitation', 'ESI 2 - Emergent', 'ESI 3 - Urgent', 'ESI 4 - Less Urgent', 'ESI 5 - Non-Urgent'];

async function hospital(conn, dir) {
  const rp = new Rng('hospital.patients');
  const patients = [];
  for (let id = 1; id <= 3200; id++) {
    const age = Math.min(99, Math.max(0, Math.round(rp.weighted([[rp.uniform(0, 17), 12], [rp.uniform(18, 44), 30], [rp.uniform(45, 64), 28], [rp.uniform(65, 99), 30]]))));
    const born = ts(2024 - age, rp.int(1, 12), rp.int(1, 28));
    const payer = age >= 65 ? rp.weighted([['Medicare', 85], ['Commercial', 10], ['Self-Pay', 5]])
      : rp.weighted([['Commercial', 52], ['Medicaid', 34], ['Self-Pay', 10], ['Medicare', 4]]);
    const sex = rp.chance(0.53) ? 'Female' : 'Male';
    patients.push([id, `MRN${String(700000 + id * 7).padStart(7, '0')}`, rp.pick(FIRST), rp.pick(LAST), sex, born, payer,
      rp.weighted(COUNTIES), rp.weighted([['English', 78], ['Spanish', 15], ['Vietnamese', 3], ['Russian', 2], ['Other', 2]])]);
  }
  await writeParquet(conn, `${dir}/patients.parquet`, [['patient_id', 'INTEGER'], ['mrn', 'VARCHAR'], ['first_name', 'VARCHAR'],
    ['last_name', 'VARCHAR'], ['sex', 'VARCHAR'], ['birth_date', 'TIMESTAMP'], ['primary_payer', 'VARCHAR'], ['home_county', 'VARCHAR'],
    ['preferred_language', 'VARCHAR']], patients);

  const rd = new Rng('hospital.physicians');
  const physicians = [];
  for (let id = 1; id <= 126; id++) {
    const spec = id <= SPECIALTIES.length ? SPECIALTIES[id - 1][0] : rd.weighted(SPECIALTIES);
    physicians.push([id, `${1000000000 + id * 7919}`, rd.pick(FIRST), rd.pick(LAST), spec,
      rd.weighted([['Employed', 60], ['Affiliated', 32], ['Locum', 8]]), rd.int(1, 38)]);
  }
  await writeParquet(conn, `${dir}/physicians.parquet`, [['physician_id', 'INTEGER'], ['npi', 'VARCHAR'], ['first_name', 'VARCHAR'],
    ['last_name', 'VARCHAR'], ['specialty_name', 'VARCHAR'], ['employment_type', 'VARCHAR'], ['years_in_practice', 'INTEGER']], physicians);

  const wards = WARDS.map((w, i) => [i + 1, w[0], w[1], w[2], w[3]]);
  await writeParquet(conn, `${dir}/wards.parquet`, [['ward_id', 'INTEGER'], ['ward_name', 'VARCHAR'], ['unit_type', 'VARCHAR'],
    ['floor', 'INTEGER'], ['licensed_beds', 'INTEGER']], wards);

  const bySpec = (s) => physicians.filter((p) => p[4] === s);
  const primaryCare = physicians.filter((p) => p[4] === 'Family Medicine' || p[4] === 'Internal Medicine');
  const wardId = (name) => wards.find((w) => w[1] === name)[0];
  const ageAt = (p, t) => (t - p[5]) / (365.25 * DAY);
  const ra = new Rng('hospital.admissions');
  const admissions = [];
  const lastDischarge = new Map();
  const pending = [];
  for (let i = 0; i < 6400; i++) pending.push(minute(ts(2023, 1, 1) + ra.next() * (END - ts(2023, 1, 1) - DAY)));
  pending.sort((a, b) => a - b);
  let aid = 1;
  for (const at of pending) {
    const drg = ra.weighted(DRGS.map((d) => [d, d[1] * (new Date(at * 1000).getUTCMonth() in { 0: 1, 1: 1, 11: 1 } && (d[0] === 'Pneumonia' || d[0] === 'Bronchiolitis' || d[0] === 'COPD') ? 1.8 : 1)]));
    let patient;
    for (let tries = 0; tries < 60; tries++) {
      const p = patients[Math.floor(ra.next() * patients.length)];
      const age = ageAt(p, at);
      if (age >= drg[6][0] && age <= drg[6][1] && (drg[3] !== 'Obstetrics' || p[4] === 'Female')) { patient = p; break; }
    }
    if (patient === undefined) continue;
    // some stays are returns of a recent discharge
    const type = drg[3] === 'Obstetrics' ? ra.weighted([['Elective', 55], ['Urgent', 35], ['Emergency', 10]])
      : ['Hip & Knee Replacement'].includes(drg[0]) ? ra.weighted([['Elective', 88], ['Urgent', 12]])
      : ra.weighted([['Emergency', 68], ['Urgent', 16], ['Transfer', 9], ['Elective', 7]]);
    const los = Math.max(0, Math.round(ra.exp(drg[4]) * 0.7 + drg[4] * 0.3));
    const admitted = at;
    let discharged = minute(admitted + los * DAY + ra.int(2, 10) * HOUR);
    const died = ra.chance(drg[8]);
    let disposition = died ? 'Expired'
      : ra.weighted(ageAt(patient, at) >= 70 ? [['Home', 45], ['Home Health', 22], ['Skilled Nursing Facility', 22], ['Rehab Facility', 8], ['Left Against Medical Advice', 3]]
        : [['Home', 82], ['Home Health', 8], ['Rehab Facility', 4], ['Skilled Nursing Facility', 2], ['Left Against Medical Advice', 4]]);
    if (discharged >= END) { discharged = null; disposition = null; }
    const spec = bySpec(drg[3]);
    const attending = ra.chance(0.2) ? bySpec('Internal Medicine')[ra.int(0, bySpec('Internal Medicine').length - 1)] : spec[ra.int(0, spec.length - 1)];
    const referring = type === 'Emergency' ? (ra.chance(0.85) ? ra.pick(bySpec('Emergency Medicine')) : null) : ra.chance(0.8) ? ra.pick(primaryCare) : null;
    const charges = round2(Math.max(1, los) * drg[5] * ra.uniform(0.8, 1.3) + (drg[2].some((w) => w.includes('ICU')) ? 4000 : 1500));
    const payer = patient[6];
    const paidRatio = { Medicare: 0.31, Medicaid: 0.24, Commercial: 0.52, 'Self-Pay': 0.09 }[payer] * ra.uniform(0.8, 1.2);
    admissions.push([aid++, patient[0], wardId(ra.pick(drg[2])), attending[0], referring ? referring[0] : null, admitted, discharged,
      type, drg[0], disposition, charges, discharged === null ? null : round2(charges * paidRatio), false]);
    if (discharged !== null && !died) lastDischarge.set(patient[0], admissions.length - 1);
  }
  // readmission flag: another stay of the same patient starting within 30 days of a discharge
  const byPatient = new Map();
  for (const a of admissions) { const l = byPatient.get(a[1]) ?? []; l.push(a); byPatient.set(a[1], l); }
  for (const list of byPatient.values()) {
    for (let i = 0; i + 1 < list.length; i++) {
      const cur = list[i], next = list[i + 1];
      if (cur[6] !== null && next[5] >= cur[6] && next[5] - cur[6] <= 30 * DAY) cur[12] = true;
    }
  }
  // plus readmissions of patients readmitted elsewhere (reported by the regional exchange)
  for (const a of admissions) {
    const drg = DRGS.find((d) => d[0] === a[8]);
    if (a[6] !== null && a[9] !== 'Expired' && !a[12] && ra.chance(drg[7] * 0.9)) a[12] = true;
  }
  await writeParquet(conn, `${dir}/admissions.parquet`, [['admission_id', 'INTEGER'], ['patient_id', 'INTEGER'], ['ward_id', 'INTEGER'],
    ['attending_id', 'INTEGER'], ['referring_id', 'INTEGER'], ['admitted_at', 'TIMESTAMP'], ['discharged_at', 'TIMESTAMP'],
    ['admit_type', 'VARCHAR'], ['drg_group', 'VARCHAR'], ['discharge_to', 'VARCHAR'], ['charges_usd', 'DOUBLE'],
    ['payments_usd', 'DOUBLE'], ['readmit_30d', 'BOOLEAN']], admissions);

  const re = new Rng('hospital.ed');
  const visits = [];
  for (let id = 1; id <= 9000; id++) {
    const day = ts(2023, 1, 1) + re.int(0, 730) * DAY;
    const hourW = [2, 1.5, 1, 1, 1, 1.2, 2, 3, 4.5, 5.5, 6, 6, 6, 6, 6, 6, 6, 6, 5.5, 5, 4.5, 4, 3.2, 2.5];
    const hour = re.weighted(hourW.map((w, h) => [h, w]));
    const arrived = minute(day + hour * HOUR + re.int(0, 59) * 60);
    const p = patients[Math.floor(re.next() * patients.length)];
    const complaint = re.weighted(COMPLAINTS);
    const serious = ['Chest Pain', 'Shortness of Breath', 'Motor Vehicle Crash'].includes(complaint);
    const level = serious ? re.weighted([[1, 6], [2, 40], [3, 44], [4, 8], [5, 2]]) : re.weighted([[1, 1], [2, 10], [3, 45], [4, 32], [5, 12]]);
    const crowd = hour >= 11 && hour <= 21 ? 1.6 : 1;
    const waitMean = [2, 12, 38, 62, 75][level - 1] * crowd;
    const lwbs = level >= 3 && re.chance(level === 3 ? 0.02 : 0.06 * crowd);
    const wait = re.exp(waitMean);
    const seen = lwbs ? null : minute(arrived + wait * 60);
    const outcome = lwbs ? 'Left Without Being Seen'
      : re.weighted(level <= 2 ? [['Admitted', 55], ['Discharged', 35], ['Transferred', 10]] : [['Discharged', 86], ['Admitted', 11], ['Transferred', 3]]);
    const stay = lwbs ? wait * 0.8 : wait + re.exp(outcome === 'Admitted' ? 330 : 140) + 40;
    const mode = level <= 2 ? re.weighted([['Ambulance', 65], ['Walk-in', 30], ['Helicopter', 5]]) : re.weighted([['Walk-in', 88], ['Ambulance', 12]]);
    visits.push([id, p[0], arrived, seen, minute(arrived + stay * 60), ACUITY[level - 1], complaint, outcome, mode]);
  }
  await writeParquet(conn, `${dir}/ed_visits.parquet`, [['visit_id', 'INTEGER'], ['patient_id', 'INTEGER'], ['arrived_at', 'TIMESTAMP'],
    ['provider_seen_at', 'TIMESTAMP'], ['departed_at', 'TIMESTAMP'], ['esi_level', 'VARCHAR'], ['complaint', 'VARCHAR'],
    ['ed_outcome', 'VARCHAR'], ['arrived_by', 'VARCHAR']], visits);
}

// ================================================================= INSURANCE
// "Lakeshore Mutual", a regional property & casualty insurer selling personal and commercial lines
// through agents in six Midwest states, policy terms effective 2022-2024.
const INS_STATES = [['Ohio', 36, 1.0], ['Indiana', 16, 0.92], ['Michigan', 15, 1.22], ['Pennsylvania', 14, 1.05], ['Kentucky', 11, 0.95], ['Illinois', 8, 1.1]];
const BIZ_A = ['Granite', 'Lakeside', 'Prairie', 'Summit', 'Buckeye', 'Riverbend', 'Keystone', 'Heartland', 'Oak Hill', 'Cardinal',
  'Maple Leaf', 'Iron Bridge', 'Blue Heron', 'Twin Pines', 'Northgate', 'Harvest'];
const BIZ_B = ['Freight', 'Bakery', 'Dental', 'Roofing', 'Auto Body', 'Hardware', 'Landscaping', 'Brewing', 'Plumbing', 'Diner',
  'Machine Shop', 'Daycare', 'Florist', 'Electric', 'Storage', 'Veterinary'];
const BIZ_C = ['LLC', 'Inc.', 'Co.', 'Ltd'];
const AGENCY_NAMES = ['Miller & Sons Insurance', 'Great Lakes Risk Partners', 'Hometown Insurance Group', 'Crossroads Agency',
  'Allegheny Insurance Services', 'Bluegrass Coverage', 'Wabash Valley Insurance', 'Shoreline Insurance Agency',
  'Heritage Risk Advisors', 'Cornerstone Insurance', 'Prairie State Brokers', 'Three Rivers Insurance'];
// line, segment, term months, base premium per term, retention, cancel p per term, claims per policy-year,
// perils [[peril, weight]], deductibles, limits
const LINES = [
  ['Personal Auto', 'Personal', 6, 1190, 0.86, 0.06, 0.3,
    [['Collision', 44], ['Glass Breakage', 16], ['Animal Strike', 12], ['Theft', 6], ['Hail', 6], ['Bodily Injury', 16]],
    [250, 500, 500, 1000], [100000, 300000, 500000]],
  ['Homeowners', 'Personal', 12, 2700, 0.88, 0.035, 0.13,
    [['Wind', 22], ['Hail', 16], ['Water Damage', 26], ['Fire', 7], ['Theft', 10], ['Lightning', 6], ['Slip and Fall', 5], ['Vandalism', 8]],
    [500, 1000, 1000, 2500], [250000, 400000, 600000]],
  ['Renters', 'Personal', 12, 360, 0.74, 0.07, 0.04,
    [['Theft', 45], ['Water Damage', 30], ['Fire', 5], ['Vandalism', 10]], [250, 500], [25000, 50000]],
  ['Commercial Auto', 'Commercial', 12, 6900, 0.82, 0.05, 0.55,
    [['Collision', 52], ['Bodily Injury', 22], ['Glass Breakage', 10], ['Theft', 6], ['Hail', 10]], [1000, 2500], [1000000]],
  ['Commercial Property', 'Commercial', 12, 8200, 0.85, 0.04, 0.2,
    [['Fire', 16], ['Wind', 20], ['Hail', 14], ['Water Damage', 26], ['Theft', 12], ['Vandalism', 12]], [2500, 5000, 10000], [1000000, 2500000, 5000000]],
  ['General Liability', 'Commercial', 12, 5500, 0.84, 0.04, 0.09,
    [['Slip and Fall', 62], ['Product Liability', 38]], [0, 1000], [1000000, 2000000]],
  ['Workers Compensation', 'Commercial', 12, 22000, 0.83, 0.05, 0.7, [['Workplace Injury', 100]], [0], [1000000]],
];
// mean loss in USD (lognormal around it) and mean days from first notice to closing the file
const PERILS = {
  Collision: [4300, 40], 'Glass Breakage': [640, 8], 'Animal Strike': [4900, 30], Theft: [3900, 45], Hail: [8800, 50],
  'Bodily Injury': [16000, 260], Wind: [10500, 55], 'Water Damage': [12800, 60], Fire: [46000, 120], Lightning: [5200, 40],
  Vandalism: [2900, 30], 'Slip and Fall': [23000, 240], 'Product Liability': [61000, 330], 'Workplace Injury': [19500, 190],
};
const CATS = [
  // event, date, states, peril weights, claim probability per exposed line
  ['June 2023 Derecho', ts(2023, 6, 29), ['Ohio', 'Indiana', 'Michigan'], [['Wind', 80], ['Hail', 20]],
    { Homeowners: 0.11, 'Commercial Property': 0.09, 'Personal Auto': 0.015, 'Commercial Auto': 0.02 }],
  ['January 2024 Deep Freeze', ts(2024, 1, 16), ['Ohio', 'Indiana', 'Michigan', 'Pennsylvania', 'Kentucky', 'Illinois'], [['Water Damage', 100]],
    { Homeowners: 0.035, 'Commercial Property': 0.045, Renters: 0.02 }],
  ['April 2024 Hailstorm', ts(2024, 4, 16), ['Ohio', 'Kentucky', 'Indiana'], [['Hail', 100]],
    { Homeowners: 0.1, 'Commercial Property': 0.08, 'Personal Auto': 0.06, 'Commercial Auto': 0.05 }],
];
const ADJ_UNITS = [['Auto Physical Damage', 12], ['Property', 12], ['Casualty', 9], ['Large Loss', 5], ['Catastrophe Response', 6]];
const YEAR = 365.25 * DAY;

async function insurance(conn, dir) {
  const rg = new Rng('insurance.agents');
  const agents = [];
  let gid = 1;
  for (const [state, weight] of INS_STATES) {
    const n = Math.max(4, Math.round(weight / 2.4));
    for (let i = 0; i < n; i++) {
      const channel = rg.weighted([['Independent', 55], ['Captive', 33], ['Direct', 12]]);
      const agency = channel === 'Direct' ? 'Lakeshore Direct Service Center' : channel === 'Captive' ? `Lakeshore Mutual - ${rg.pick(LAST)} Agency`
        : rg.pick(AGENCY_NAMES);
      agents.push([gid, `P${String(40000 + gid * 13)}`, rg.pick(FIRST), rg.pick(LAST), agency, channel, state,
        minute(ts(2005, 1, 1) + rg.next() * (ts(2022, 6, 1) - ts(2005, 1, 1)))]);
      gid++;
    }
  }
  await writeParquet(conn, `${dir}/agents.parquet`, [['agent_id', 'INTEGER'], ['producer_code', 'VARCHAR'], ['first_name', 'VARCHAR'],
    ['last_name', 'VARCHAR'], ['agency_name', 'VARCHAR'], ['agency_type', 'VARCHAR'], ['licensed_state', 'VARCHAR'],
    ['appointed_at', 'TIMESTAMP']], agents);

  const rj = new Rng('insurance.adjusters');
  const adjusters = [];
  let jid = 1;
  for (const [unit, n] of ADJ_UNITS) {
    for (let i = 0; i < n; i++) {
      const type = unit === 'Catastrophe Response' ? rj.weighted([['Contract', 80], ['Staff', 20]]) : rj.weighted([['Staff', 85], ['Contract', 15]]);
      adjusters.push([jid++, rj.pick(FIRST), rj.pick(LAST), unit, type, unit === 'Large Loss' ? rj.int(10, 30) : rj.int(1, 25)]);
    }
  }
  await writeParquet(conn, `${dir}/adjusters.parquet`, [['adjuster_id', 'INTEGER'], ['first_name', 'VARCHAR'], ['last_name', 'VARCHAR'],
    ['unit_name', 'VARCHAR'], ['employment_type', 'VARCHAR'], ['years_licensed', 'INTEGER']], adjusters);

  const rh = new Rng('insurance.policyholders');
  const holders = [];
  for (let id = 1; id <= 2600; id++) {
    const segment = rh.chance(0.8) ? 'Personal' : 'Commercial';
    const state = rh.weighted(INS_STATES.map((s) => [s[0], s[1]]));
    const name = segment === 'Personal' ? `${rh.pick(FIRST)} ${rh.pick(LAST)}` : `${rh.pick(BIZ_A)} ${rh.pick(BIZ_B)} ${rh.pick(BIZ_C)}`;
    const score = Math.max(380, Math.min(950, Math.round(rh.normal(segment === 'Personal' ? 715 : 740, 85))));
    const legacy = rh.chance(0.42);
    const since = legacy ? minute(ts(2004, 1, 1) + rh.next() * (ts(2021, 12, 31) - ts(2004, 1, 1)))
      : minute(ts(2022, 1, 1) + rh.next() * (ts(2024, 12, 20) - ts(2022, 1, 1)));
    const inState = agents.filter((a) => a[6] === state && (segment === 'Personal' || a[5] === 'Independent'));
    const pool = inState.length > 0 ? inState : agents.filter((a) => a[6] === state);
    const agent = pool[Math.floor(Math.pow(rh.next(), 1.5) * pool.length)];
    holders.push([id, name, segment, state, `${rh.int(40, 49)}${String(rh.int(0, 999)).padStart(3, '0')}`, score, since, agent[0]]);
  }
  await writeParquet(conn, `${dir}/policyholders.parquet`, [['policyholder_id', 'INTEGER'], ['display_name', 'VARCHAR'],
    ['segment', 'VARCHAR'], ['home_state', 'VARCHAR'], ['zip_code', 'VARCHAR'], ['insurance_score', 'INTEGER'],
    ['customer_since', 'TIMESTAMP']], holders.map((h) => h.slice(0, 7)));

  const rp = new Rng('insurance.policies');
  const rc = new Rng('insurance.claims');
  const policies = [];
  const claims = [];
  const prefix = { 'Personal Auto': 'PA', Homeowners: 'HO', Renters: 'RN', 'Commercial Auto': 'CA', 'Commercial Property': 'CP',
    'General Liability': 'GL', 'Workers Compensation': 'WC' };
  const lossClaim = (policy, line, state, lossAt, peril, cat) => {
    const [meanLoss, meanDays] = PERILS[peril];
    const liability = ['Bodily Injury', 'Slip and Fall', 'Product Liability', 'Workplace Injury'].includes(peril);
    const lag = cat !== null ? rc.exp(4) : rc.exp(liability ? 18 : 3.5);
    const reported = minute(lossAt + lag * DAY + rc.int(0, 10) * HOUR);
    if (reported >= END) return; // not yet reported at the end of 2024
    const bigRisk = line === 'Commercial Property' && (peril === 'Fire' || peril === 'Wind') ? 2.6 : 1;
    const ground = meanLoss * bigRisk * Math.exp(rc.normal(-0.45, 0.95));
    const litigated = rc.chance({ 'Bodily Injury': 0.24, 'Slip and Fall': 0.3, 'Product Liability': 0.42, 'Workplace Injury': 0.11 }[peril] ?? 0.01);
    const fraud = rc.chance((peril === 'Theft' ? 0.09 : peril === 'Water Damage' || peril === 'Fire' ? 0.05 : 0.02) + (lag > 30 ? 0.1 : 0));
    const severity = round2(ground * (litigated ? 1.9 : 1));
    const noPay = rc.chance(fraud ? 0.35 : peril === 'Glass Breakage' ? 0.04 : 0.11);
    const days = rc.exp(meanDays) * (litigated ? 2.4 : 1) * (cat !== null ? 1.3 : 1) + 2;
    let closed = minute(reported + days * DAY);
    let status;
    if (closed >= END) { closed = null; status = 'Open'; }
    else if (rc.chance(0.035) && !noPay) { status = 'Reopened'; closed = null; }
    else status = noPay ? 'Closed Without Payment' : 'Closed';
    let paid = 0, reserve = 0;
    if (status === 'Closed') paid = severity;
    else if (status === 'Open' || status === 'Reopened') {
      const frac = status === 'Reopened' ? rc.uniform(0.7, 0.95) : rc.uniform(0, 0.6);
      paid = noPay ? 0 : round2(severity * frac);
      reserve = round2(severity * (1 - frac) * rc.uniform(0.8, 1.4));
    }
    const expense = round2(severity * (liability ? 0.14 : 0.05) * (litigated ? 2.2 : 1) * rc.uniform(0.6, 1.4) + (cat !== null ? 180 : 90));
    const unit = cat !== null ? 'Catastrophe Response' : severity >= 75000 ? 'Large Loss'
      : liability ? 'Casualty' : line.includes('Auto') ? 'Auto Physical Damage' : 'Property';
    const pool = adjusters.filter((a) => a[3] === unit);
    const adjuster = pool[Math.floor(Math.pow(rc.next(), 1.3) * pool.length)];
    const via = rc.weighted(line.startsWith('Commercial') || line === 'General Liability' || line === 'Workers Compensation'
      ? [['Agent', 55], ['Phone', 30], ['Web', 15]] : [['Phone', 38], ['Mobile App', 27], ['Agent', 20], ['Web', 15]]);
    claims.push([0, policy, adjuster[0], minute(lossAt), reported, closed, peril, status, paid, reserve, expense, fraud, litigated, cat, via]);
  };
  let pid = 1;
  for (const h of holders) {
    const lines = h[2] === 'Personal'
      ? (() => {
        const own = rp.chance(0.62);
        const l = [];
        if (rp.chance(0.86)) l.push('Personal Auto');
        if (own) l.push('Homeowners'); else if (rp.chance(0.35)) l.push('Renters');
        if (l.length === 0) l.push('Personal Auto');
        return l;
      })()
      : LINES.filter((l) => l[1] === 'Commercial' && rp.chance({ 'Commercial Auto': 0.45, 'Commercial Property': 0.7, 'General Liability': 0.8, 'Workers Compensation': 0.55 }[l[0]])).map((l) => l[0]);
    if (lines.length === 0) lines.push('General Liability');
    const tier = h[5] >= 750 ? 0.85 : h[5] >= 620 ? 1 : 1.35;
    const stateFactor = INS_STATES.find((s) => s[0] === h[3])[2];
    for (const lineName of lines) {
      const line = LINES.find((l) => l[0] === lineName);
      const [, , months, base, retention, cancelP, freq, perils, deds, limits] = line;
      // first term in the window: the next anniversary of a legacy customer in 2022, or the date a new customer bought
      let eff = h[6] < ts(2022, 1, 1) ? minute(ts(2022, 1, 1) + rp.next() * months * 30 * DAY) : minute(h[6] + rp.int(0, 20) * DAY);
      let kind = h[6] < ts(2022, 1, 1) ? 'Renewal' : 'New Business';
      eff = Math.floor(eff / DAY) * DAY;
      if (eff >= END) continue;
      const size = h[2] === 'Commercial' ? Math.exp(rp.normal(0, 0.7)) : Math.exp(rp.normal(0, 0.3));
      const deductible = rp.pick(deds);
      const limit = rp.pick(limits);
      const plan = rp.weighted(h[2] === 'Commercial' ? [['Paid in Full', 45], ['Quarterly', 35], ['Monthly', 20]] : [['Monthly', 52], ['Paid in Full', 33], ['Quarterly', 15]]);
      let termClaims = 0;
      while (eff < END) {
        const exp = addMonths(eff, months);
        const yearLoad = new Date(eff * 1000).getUTCFullYear() === 2022 ? 1 : new Date(eff * 1000).getUTCFullYear() === 2023 ? 1.07 : 1.15;
        const full = round2(base * size * tier * stateFactor * yearLoad * (deductible >= 1000 ? 0.93 : 1) * rp.uniform(0.85, 1.15));
        const cancelled = rp.chance(cancelP * (tier > 1 ? 1.8 : 1));
        let cancelAt = cancelled ? Math.floor((eff + rp.uniform(0.05, 0.95) * (exp - eff)) / DAY) * DAY : null;
        if (cancelAt !== null && cancelAt >= END) cancelAt = null;
        const reason = cancelAt === null ? null : rp.weighted([['Non-Payment', plan === 'Monthly' ? 50 : 25], ['Insured Request', 30],
          ['Moved Out of State', 10], ['Underwriting Reasons', 10]]);
        const stop = Math.min(cancelAt ?? exp, END);
        const written = cancelAt === null ? full : round2(full * (cancelAt - eff) / (exp - eff));
        const earned = cancelAt === null ? round2(full * Math.max(0, Math.min(1, (stop - eff) / (exp - eff)))) : written;
        // everyday losses during the covered time
        termClaims = 0;
        const exposure = (stop - eff) / YEAR;
        const lam = freq * exposure * (tier > 1 ? 1.3 : tier < 1 ? 0.85 : 1) * (h[2] === 'Commercial' ? size : 1);
        let count = -1;
        for (let p = 1; p > Math.exp(-lam); p *= rp.next()) count++;
        for (let k = 0; k < count; k++) {
          const lossAt = eff + rc.next() * (stop - eff);
          const month = new Date(lossAt * 1000).getUTCMonth();
          const peril = rc.weighted(perils.map(([p, w]) => [p, w * (p === 'Hail' || p === 'Wind' ? ([3, 4, 5, 6].includes(month) ? 1.8 : 0.6)
            : p === 'Water Damage' ? ([11, 0, 1].includes(month) ? 1.7 : 0.8) : p === 'Animal Strike' ? ([9, 10, 11].includes(month) ? 2.5 : 0.6) : 1)]));
          lossClaim(pid, lineName, h[3], lossAt, peril, null);
          termClaims++;
        }
        for (const [event, at, states, catPerils, probs] of CATS) {
          if (at < eff || at >= stop || !states.includes(h[3]) || probs[lineName] === undefined) continue;
          if (!rc.chance(probs[lineName])) continue;
          lossClaim(pid, lineName, h[3], at + rc.int(0, 20) * HOUR, rc.weighted(catPerils), event);
          termClaims++;
        }
        let status, renewed = false;
        if (cancelAt !== null) status = 'Cancelled';
        else if (exp > END) status = 'In Force';
        else if (termClaims >= 1 && rp.chance(termClaims >= 2 ? 0.4 : 0.12)) status = 'Non-Renewed';
        else if (rp.chance(retention * (tier > 1 ? 0.93 : 1))) { status = 'Renewed'; renewed = true; }
        else status = 'Lapsed';
        policies.push([pid, `${prefix[lineName]}-${String(1000000 + pid * 37).slice(1)}`, h[0], h[7], lineName, eff, exp, months,
          kind, status, reason, plan, deductible, limit, written, earned]);
        pid++;
        if (!renewed) break;
        eff = exp;
        kind = 'Renewal';
      }
    }
  }
  await writeParquet(conn, `${dir}/policies.parquet`, [['policy_id', 'INTEGER'], ['policy_number', 'VARCHAR'], ['policyholder_id', 'INTEGER'],
    ['agent_id', 'INTEGER'], ['lob', 'VARCHAR'], ['term_start', 'TIMESTAMP'], ['expiration_date', 'TIMESTAMP'], ['term_months', 'INTEGER'],
    ['transaction_type', 'VARCHAR'], ['term_status', 'VARCHAR'], ['cancel_reason', 'VARCHAR'], ['billing_plan', 'VARCHAR'],
    ['deductible_usd', 'DOUBLE'], ['limit_usd', 'DOUBLE'], ['written_premium_usd', 'DOUBLE'], ['earned_premium_usd', 'DOUBLE']], policies);

  claims.sort((a, b) => a[4] - b[4] || a[1] - b[1]);
  claims.forEach((c, i) => { c[0] = i + 1; c.splice(1, 0, `CLM-${new Date(c[4] * 1000).getUTCFullYear() % 100}-${String(i + 1).padStart(6, '0')}`); });
  await writeParquet(conn, `${dir}/claims.parquet`, [['claim_id', 'INTEGER'], ['claim_number', 'VARCHAR'], ['policy_id', 'INTEGER'],
    ['adjuster_id', 'INTEGER'], ['loss_date', 'TIMESTAMP'], ['reported_at', 'TIMESTAMP'], ['closed_at', 'TIMESTAMP'], ['peril_desc', 'VARCHAR'],
    ['claim_state', 'VARCHAR'], ['paid_loss_usd', 'DOUBLE'], ['case_reserve_usd', 'DOUBLE'], ['expense_paid_usd', 'DOUBLE'],
    ['siu_referral', 'BOOLEAN'], ['in_suit', 'BOOLEAN'], ['cat_event', 'VARCHAR'], ['report_channel', 'VARCHAR']], claims);
}

// ================================================================= main
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const conn = await instance.connect();
for (const [name, fn] of [['saas', saas], ['hospital', hospital], ['insurance', insurance]]) {
  if (opts.only !== null && !opts.only.includes(name)) continue;
  const dir = path.join(HERE, name, 'data');
  mkdirSync(dir, { recursive: true });
  console.log(name);
  await fn(conn, dir);
}
conn.closeSync();
instance.closeSync();
