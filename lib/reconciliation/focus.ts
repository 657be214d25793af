import { CONTROL, codePoint, Problems, show } from "./csv";
import { dayIn } from "./days";
import { decimalToMicros } from "./decimal";
import type { BadLine } from "./errors";
import type { ReportedRow } from "./types";

// A FOCUS export read as it is (the FinOps Open Cost and Usage Specification, 1.0 and later: AWS
// Data Exports, Google Cloud's BigQuery FOCUS view, Azure Cost Management's FOCUS export), so Bedrock,
// Vertex AI and Azure OpenAI spend is reconciled without a transform. Its columns:
//   ChargePeriodStart   the instant the charge's period starts (UTC): its day in the source's zone
//   BilledCost          the money compared: what the invoice charges for the row, in BillingCurrency
//   BillingCurrency     must be the source's currency
//   ServiceName         with ChargeDescription (else SkuId): the row's item, "Amazon Bedrock: ..."
//   ChargeCategory      Usage rows are items as they are; Purchase, Tax, Credit and Adjustment rows
//                       are items of their own, "Tax: Amazon Bedrock: ...", so no usage rule
//                       takes them and their money shows (unmapped until a rule maps it)
//   ConsumedQuantity    the units, a decimal rounded up to a whole unit (0 when empty);
//   ConsumedUnit        shown beside them
// Every other column (EffectiveCost, ListCost, ResourceId, Tags, the clouds' x_ columns) is kept in
// the row's raw record. Rows of the same day and item are summed (an export has one row per hour,
// resource and SKU). A charge whose period spans more than a day (a monthly fee, a commitment) is
// counted on the day it starts.
//
// Why BilledCost: it is the invoice, and the comparison asks whether the invoice agrees with what
// Ceilings charged. EffectiveCost spreads commitments (Savings Plans, committed use discounts,
// reservations) over the usage they cover: a useful allocation, but not what was billed that day.

export const FOCUS_REQUIRED = ["ChargePeriodStart", "BilledCost", "BillingCurrency", "ServiceName"] as const;
const ITEM_MAX = 200;
const INSTANT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/;
const QUANTITY = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Whether a CSV header is a FOCUS export's: it names ChargePeriodStart and BilledCost. */
export function isFocusHeader(names: readonly string[]): boolean {
  return names.includes("ChargePeriodStart") && names.includes("BilledCost");
}

/** A FOCUS timestamp as an instant: ISO 8601, or BigQuery's "2026-11-01 00:00:00 UTC"; no zone means UTC. */
export function focusInstant(text: string): Date | null {
  const m = INSTANT.exec(text.trim());
  if (!m) return null;
  const zone = m[3] === undefined || m[3] === "UTC" || m[3] === "Z" ? "Z" : m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3];
  const at = new Date(`${m[1] ?? ""}T${m[2] ?? ""}${zone}`);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** A quantity as whole units, rounded up (5.2 GB-hours bill as 6), or null when not a number 0 or more. */
export function wholeUnits(text: string): number | null {
  const t = text.trim();
  if (t === "") return 0;
  if (!QUANTITY.test(t)) return null;
  const n = Number(t);
  if (!Number.isFinite(n)) return null;
  const units = Math.ceil(n - 1e-9);
  return Number.isSafeInteger(units) && units >= 0 ? units : null;
}

type Sum = { day: string; item: string; units: number; micros: number; unit: string | null; mixedUnits: boolean; lines: number[]; first: Record<string, string> };

/**
 * The rows of a FOCUS export in the source's zone and currency, summed per day and item; or every
 * bad line with its reason. `records` are the CSV's records, the header first.
 */
export function parseFocus(records: { line: number; cells: string[]; error?: string }[], opts: { timeZone: string; currency: string | null }): { ok: true; rows: ReportedRow[] } | { ok: false; errors: BadLine[] } {
  const problems = new Problems();
  const [header, ...body] = records;
  if (!header) return { ok: false, errors: [{ line: 1, reason: "the file is empty" }] };
  const names = header.cells.map((c) => c.trim());
  const at = new Map<string, number>();
  for (const [index, name] of names.entries()) {
    if (CONTROL.test(name)) problems.add(header.line, `column ${index + 1} of the header contains a control character (${codePoint(name)})`);
    else if (at.has(name)) problems.add(header.line, `column '${show(name)}' appears twice`);
    else at.set(name, index);
  }
  for (const need of FOCUS_REQUIRED) if (!at.has(need)) problems.add(header.line, `a FOCUS export needs the column '${need}' (FOCUS 1.0 and later)`);
  if (!at.has("ChargeDescription") && !at.has("SkuId")) problems.add(header.line, "a FOCUS export needs ChargeDescription or SkuId to name its items");
  if (problems.any) return { ok: false, errors: problems.done() };
  const cell = (cells: string[], name: string) => {
    const index = at.get(name);
    return index === undefined ? "" : (cells[index] ?? "").trim();
  };
  const sums = new Map<string, Sum>();
  for (const r of body) {
    if (r.error) {
      problems.add(r.line, r.error);
      continue;
    }
    if (r.cells.length !== names.length) {
      problems.add(r.line, `expected ${names.length} fields, got ${r.cells.length}`);
      continue;
    }
    const reasons: string[] = [];
    const start = focusInstant(cell(r.cells, "ChargePeriodStart"));
    if (!start) reasons.push(`ChargePeriodStart must be a time such as 2026-11-01T00:00:00Z, got '${show(cell(r.cells, "ChargePeriodStart"))}'`);
    const currency = cell(r.cells, "BillingCurrency").toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) reasons.push(`BillingCurrency must be a currency code such as USD, got '${show(currency)}'`);
    else if (opts.currency !== null && currency !== opts.currency) reasons.push(`BillingCurrency is ${currency}, the source counts ${opts.currency}`);
    const cost = decimalToMicros(cell(r.cells, "BilledCost") || "0", { exponents: true, negative: true });
    if (!cost.ok) reasons.push(`BilledCost must be a decimal, got '${show(cell(r.cells, "BilledCost"))}'`);
    const units = wholeUnits(cell(r.cells, "ConsumedQuantity"));
    if (units === null) reasons.push(`ConsumedQuantity must be a number 0 or more, got '${show(cell(r.cells, "ConsumedQuantity"))}'`);
    const service = cell(r.cells, "ServiceName");
    const what = cell(r.cells, "ChargeDescription") || cell(r.cells, "SkuId");
    const category = cell(r.cells, "ChargeCategory");
    for (const [name, value] of [["ServiceName", service], ["ChargeDescription", what], ["ChargeCategory", category], ["ConsumedUnit", cell(r.cells, "ConsumedUnit")]] as const) {
      if (CONTROL.test(value)) reasons.push(`${name} contains a control character (${codePoint(value)})`);
    }
    if (service === "") reasons.push("ServiceName is empty");
    if (reasons.length > 0 || !start || !cost.ok || units === null) {
      problems.add(r.line, reasons.join("; "));
      continue;
    }
    const base = what === "" ? service : `${service}: ${what}`;
    const item = (category === "" || category.toLowerCase() === "usage" ? base : `${category}: ${base}`).slice(0, ITEM_MAX);
    const day = dayIn(start, opts.timeZone);
    const key = `${day}\u0000${item}`;
    const unit = cell(r.cells, "ConsumedUnit") || null;
    const sum = sums.get(key);
    if (sum) {
      sum.units += units;
      sum.micros += cost.micros;
      sum.mixedUnits ||= sum.unit !== unit;
      sum.lines.push(r.line);
    } else {
      sums.set(key, { day, item, units, micros: cost.micros, unit, mixedUnits: false, lines: [r.line], first: Object.fromEntries(names.map((n, k) => [n, r.cells[k] ?? ""])) });
    }
  }
  if (problems.any) return { ok: false, errors: problems.done() };
  const rows = [...sums.values()].map(
    (s): ReportedRow => ({
      day: s.day,
      item: s.item,
      units: s.units,
      costMicros: s.micros,
      ...(s.unit !== null && !s.mixedUnits ? { unit: s.unit } : {}),
      // The first row as exported, and which lines were summed into this one.
      raw: { format: "FOCUS", lines: s.lines.length > 20 ? [...s.lines.slice(0, 20), `and ${s.lines.length - 20} more`] : s.lines, ...s.first },
    }),
  );
  return { ok: true, rows };
}
