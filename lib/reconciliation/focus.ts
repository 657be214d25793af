import { CONTROL, codePoint, Problems, show } from "./csv";
import { dayIn, isProviderDay } from "./days";
import { decimalToMicros } from "./decimal";
import type { BadLine } from "./errors";
import type { ReportedRow } from "./types";

// A FOCUS export read as it is (the FinOps Open Cost and Usage Specification, 1.0 and later: AWS
// Data Exports, Google Cloud's BigQuery FOCUS export, Azure Cost Management's FOCUS export), so
// Bedrock, Vertex AI and Azure OpenAI spend is reconciled without a transform. Its columns:
//   ChargePeriodStart,  the day, in the source's zone, of the middle of the charge's period, or of
//   ChargePeriodEnd     its first 12 hours when it is longer than a day (a monthly fee, a purchase,
//                       monthly tax): an hour lands on its own day, a UTC day (Azure's rows, or
//                       any daily export) on its own date in every zone within 12 hours of UTC
//                       (counting it from its start would put each day on the evening before in
//                       the Americas), and a month on the day it starts
//   BilledCost          the money compared: what the invoice charges for the row. EffectiveCost
//                       spreads commitments (Savings Plans, committed use discounts, reservations)
//                       over the usage they cover, which is not what was billed that day; it is
//                       summed into the row's raw record beside BilledCost
//   BillingCurrency     must be the source's currency
//   ServiceName +       the item, "Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens": the service
//   x_UsageType, else   and the first of these filled in. AWS's usage type names the region, the
//   ChargeDescription,  model and the token kind, while its ChargeDescription is a rate that opens
//   else SkuId          with the price ("$0.003 per 1K input tokens for ...") and changes with it;
//                       Google Cloud's description is the SKU's ("Gemini 2.5 Pro Input Tokens"),
//                       Azure's the product's. So one prefix rule maps a service or one model
//   ChargeCategory      Usage rows are items as above; Purchase, Tax, Credit and Adjustment rows
//                       are items of their own ("Tax: Amazon Bedrock: ..."), so no usage rule
//                       takes them and their money shows as unmapped until a rule maps it
//   ChargeClass         a Correction of an earlier billing period is an item of its own
//                       ("Correction: ...") on the first day of the billing period that invoices
//                       it (BillingPeriodStart): on the day it corrects, it would replace that
//                       day's usage, imported long before, with the correction alone. Its money
//                       counts; its units do not (a refund's quantity is negative)
//   ConsumedQuantity,   the units: the exact sum of the quantities, rounded up to a whole unit
//   ConsumedUnit        once (0 when empty: tax, credits, purchases); and their unit
// Rows of the same day, item and unit are summed (an export has a row per hour, resource and SKU).
// Every column is kept in the row's raw record: the first line's as exported, the sums of
// BilledCost, EffectiveCost and ConsumedQuantity, and the lines summed.

const REQUIRED = ["ChargePeriodStart", "ChargePeriodEnd", "BilledCost", "BillingCurrency", "ChargeCategory", "ServiceName"] as const;
/** What names a row's item after its service, the first one filled in (see above). */
const ITEM_COLUMNS = ["x_UsageType", "ChargeDescription", "SkuId"] as const;
const CATEGORIES = ["Usage", "Purchase", "Tax", "Credit", "Adjustment"] as const;
/** As file.ts's MAX_ITEM_LENGTH (not imported: file.ts imports this module). */
const ITEM_MAX = 200;
const HALF_DAY_MS = 12 * 3_600_000;
/** Lines listed in a summed row's raw record at most. */
const LINES_KEPT = 20;
const INSTANT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/;
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** Exact sums count 10^-18 of a unit: below any cloud's precision, so nothing is lost to rounding before the one rounding to micros. */
const SCALE = 18;
const ONE = 10n ** BigInt(SCALE);
/** A quantity's fraction below a billionth of a unit is a float's noise in the export (12.000000000000002), not a unit more. */
const NOISE = 10n ** BigInt(SCALE - 9);

/** Whether a CSV header is a FOCUS export's: it names ChargePeriodStart and BilledCost (in any case). */
export function isFocusHeader(names: readonly string[]): boolean {
  const lower = new Set(names.map((n) => n.trim().toLowerCase()));
  return lower.has("chargeperiodstart") && lower.has("billedcost");
}

/**
 * A FOCUS timestamp as an instant: ISO 8601 (seconds optional, as in Azure's first 1.0 exports),
 * or BigQuery's "2026-11-01 00:00:00 UTC"; no zone means UTC (FOCUS times are UTC). A day or a
 * time that does not exist (2026-02-30, 24:00) is not one.
 */
export function focusInstant(text: string): Date | null {
  const m = INSTANT.exec(text.trim());
  if (!m || !isProviderDay(m[1] ?? "")) return null;
  const [hours, minutes, seconds] = [Number(m[2]), Number(m[3]), Number(m[4] ?? "0")];
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  const zone = m[6] === undefined || m[6] === "UTC" || m[6] === "Z" ? "Z" : m[6].length === 5 ? `${m[6].slice(0, 3)}:${m[6].slice(3)}` : m[6];
  const at = new Date(`${m[1] ?? ""}T${m[2] ?? ""}:${m[3] ?? ""}:${m[4] ?? "00"}${m[5] ?? ""}${zone}`);
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * A decimal as an exact count of 10^-18 (rounded half away from zero past that), or null when it
 * is not a decimal (exponents allowed: exports write 1.5E-5) or is beyond any bill (10^18).
 */
export function exactDecimal(text: string): bigint | null {
  const m = DECIMAL.exec(text);
  if (!m || text.length > 64) return null;
  const fraction = m[3] ?? "";
  const digits = BigInt(`${m[2] ?? "0"}${fraction}`);
  const shift = Number(m[4] ?? "0") - fraction.length + SCALE;
  let value: bigint;
  if (shift >= 0) {
    if (shift > 60) return null;
    value = digits * 10n ** BigInt(shift);
  } else if (-shift > 80) {
    value = 0n;
  } else {
    const base = 10n ** BigInt(-shift);
    value = (digits + base / 2n) / base;
  }
  if (value > ONE * ONE) return null;
  return m[1] === "-" ? -value : value;
}

/** An exact count of 10^-18 written as a plain decimal: "0.3150075", "-0.5", "200000". */
export function decimalText(value: bigint): string {
  const magnitude = value < 0n ? -value : value;
  const fraction = (magnitude % ONE).toString().padStart(SCALE, "0").replace(/0+$/, "");
  return `${value < 0n ? "-" : ""}${magnitude / ONE}${fraction === "" ? "" : `.${fraction}`}`;
}

/** A quantity 0 or more as whole units, rounded up (5.2 GB-hours bill as 6); noise below a billionth dropped. */
export function wholeUnits(quantity: bigint): bigint {
  const whole = quantity / ONE;
  return quantity % ONE > NOISE ? whole + 1n : whole;
}

type Records = { line: number; cells: string[]; error?: string }[];
type Group = {
  day: string;
  item: string;
  unit: string | null;
  correction: boolean;
  billed: bigint;
  effective: bigint | null;
  quantity: bigint | null;
  lines: number[];
  first: Record<string, string>;
};

/**
 * The rows of a FOCUS export in the source's zone and currency, summed per day, item and unit; or
 * every bad line with its reason. `records` are the CSV's records, the header first.
 */
export function parseFocus(
  records: Records,
  opts: { timeZone: string; currency: string },
): { ok: true; rows: ReportedRow[] } | { ok: false; errors: BadLine[] } {
  const problems = new Problems();
  const [header, ...body] = records;
  if (!header) return { ok: false, errors: [{ line: 1, reason: "the file is empty" }] };
  const names = header.cells.map((c) => c.trim());
  // FOCUS names its columns in PascalCase; a query tool may lower them (Athena does): matched in any case.
  const at = new Map<string, number>();
  for (const [index, name] of names.entries()) {
    if (CONTROL.test(name)) problems.add(header.line, `column ${index + 1} of the header contains a control character (${codePoint(name)})`);
    else if (at.has(name.toLowerCase())) problems.add(header.line, `column '${show(name)}' appears twice`);
    else at.set(name.toLowerCase(), index);
  }
  for (const need of REQUIRED) if (!at.has(need.toLowerCase())) problems.add(header.line, `a FOCUS export needs the column '${need}' (FOCUS 1.0 and later)`);
  if (!ITEM_COLUMNS.some((c) => at.has(c.toLowerCase()))) problems.add(header.line, "a FOCUS export needs ChargeDescription or SkuId to name its items");
  if (problems.any) return { ok: false, errors: problems.done() };
  const cellOf = (cells: string[]) => (name: string) => {
    const index = at.get(name.toLowerCase());
    return index === undefined ? "" : (cells[index] ?? "").trim();
  };
  const groups = new Map<string, Group>();
  for (const r of body) {
    if (r.error) {
      problems.add(r.line, r.error);
      continue;
    }
    if (r.cells.length !== names.length) {
      problems.add(r.line, `expected ${names.length} fields, got ${r.cells.length}`);
      continue;
    }
    const cell = cellOf(r.cells);
    const reasons: string[] = [];
    // Postgres cannot store a NUL in the raw record; every other character is kept as exported.
    const nul = r.cells.findIndex((c) => c.includes("\u0000"));
    if (nul >= 0) reasons.push(`${show(names[nul] ?? "")} contains a NUL character (U+0000)`);
    const start = focusInstant(cell("ChargePeriodStart"));
    if (!start) reasons.push(`ChargePeriodStart must be a time such as 2026-11-01T00:00:00Z, got '${show(cell("ChargePeriodStart"))}'`);
    const end = focusInstant(cell("ChargePeriodEnd"));
    if (!end) reasons.push(`ChargePeriodEnd must be a time such as 2026-11-02T00:00:00Z, got '${show(cell("ChargePeriodEnd"))}'`);
    else if (start && end.getTime() <= start.getTime())
      reasons.push(`ChargePeriodEnd (${cell("ChargePeriodEnd")}) must be after ChargePeriodStart (${cell("ChargePeriodStart")})`);
    const currency = cell("BillingCurrency").toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) reasons.push(`BillingCurrency must be a currency code such as USD, got '${show(cell("BillingCurrency"))}'`);
    else if (currency !== opts.currency) reasons.push(`BillingCurrency is ${currency}, the source counts ${opts.currency}`);
    const billed = exactDecimal(cell("BilledCost"));
    if (billed === null) reasons.push(`BilledCost must be a decimal such as 0.36, got '${show(cell("BilledCost"))}'`);
    const effective = cell("EffectiveCost") === "" ? null : exactDecimal(cell("EffectiveCost"));
    if (cell("EffectiveCost") !== "" && effective === null) reasons.push(`EffectiveCost must be a decimal such as 0.36, got '${show(cell("EffectiveCost"))}'`);
    const category = CATEGORIES.find((c) => c.toLowerCase() === cell("ChargeCategory").toLowerCase());
    if (!category) reasons.push(`ChargeCategory must be ${CATEGORIES.join(", ")}, got '${show(cell("ChargeCategory"))}'`);
    const chargeClass = cell("ChargeClass");
    const correction = chargeClass.toLowerCase() === "correction";
    if (chargeClass !== "" && !correction) reasons.push(`ChargeClass must be empty or Correction, got '${show(chargeClass)}'`);
    const quantity = cell("ConsumedQuantity") === "" ? null : exactDecimal(cell("ConsumedQuantity"));
    if (cell("ConsumedQuantity") !== "" && (quantity === null || (quantity < 0n && !correction)))
      reasons.push(`ConsumedQuantity must be a number 0 or more, got '${show(cell("ConsumedQuantity"))}'`);
    // A correction counts on its billing period's first day (see above), an ordinary charge in its own period.
    let anchor: Date | null = null;
    if (correction) {
      const billing = focusInstant(cell("BillingPeriodStart"));
      if (!billing)
        reasons.push(
          `a correction counts on the first day of its billing period: BillingPeriodStart must be a time such as 2026-11-01T00:00:00Z, got '${show(cell("BillingPeriodStart"))}'`,
        );
      else anchor = new Date(billing.getTime() + HALF_DAY_MS);
    } else if (start && end) {
      anchor = new Date(start.getTime() + Math.min((end.getTime() - start.getTime()) / 2, HALF_DAY_MS));
    }
    const service = cell("ServiceName");
    const what = ITEM_COLUMNS.map((c) => cell(c)).find((v) => v !== "") ?? "";
    const unit = cell("ConsumedUnit");
    // A control character is named by its code point, never echoed (a NUL would end a log line).
    for (const [name, value] of [
      ["ServiceName", service],
      ["the item's name", what],
      ["ChargeCategory", cell("ChargeCategory")],
      ["ConsumedUnit", unit],
    ] as const) {
      if (CONTROL.test(value)) reasons.push(`${name} contains a control character (${codePoint(value)})`);
    }
    if (service === "") reasons.push("ServiceName is empty");
    if (reasons.length > 0 || !anchor || billed === null || !category) {
      problems.add(r.line, reasons.join("; "));
      continue;
    }
    const named = what === "" ? service : `${service}: ${what}`;
    const item = `${correction ? "Correction: " : ""}${category === "Usage" ? "" : `${category}: `}${named}`.slice(0, ITEM_MAX);
    const day = dayIn(anchor, opts.timeZone);
    const key = [day, item, unit].join("\u0000");
    const group = groups.get(key);
    if (group) {
      group.billed += billed;
      if (effective !== null) group.effective = (group.effective ?? 0n) + effective;
      if (quantity !== null) group.quantity = (group.quantity ?? 0n) + quantity;
      group.lines.push(r.line);
    } else {
      groups.set(key, {
        day,
        item,
        unit: unit === "" ? null : unit,
        correction,
        billed,
        effective,
        quantity,
        lines: [r.line],
        first: Object.fromEntries(names.map((n, k) => [n, r.cells[k] ?? ""])),
      });
    }
  }
  if (problems.any) return { ok: false, errors: problems.done() };
  const rows: ReportedRow[] = [];
  for (const g of groups.values()) {
    const units = g.correction || g.quantity === null ? 0n : wholeUnits(g.quantity);
    const cost = decimalToMicros(decimalText(g.billed), { negative: true });
    const line = g.lines[0] ?? 0;
    if (units > BigInt(Number.MAX_SAFE_INTEGER))
      problems.add(line, `the ConsumedQuantity of ${g.day} ${show(g.item)} adds up to more than ${Number.MAX_SAFE_INTEGER} units`);
    if (!cost.ok) problems.add(line, `the BilledCost of ${g.day} ${show(g.item)} adds up to ${show(decimalText(g.billed))}, too large an amount`);
    if (units > BigInt(Number.MAX_SAFE_INTEGER) || !cost.ok) continue;
    rows.push({
      day: g.day,
      item: g.item,
      units: Number(units),
      costMicros: cost.micros,
      ...(g.unit === null ? {} : { unit: g.unit }),
      // What was summed first (the page shows a raw record's first 300 characters), then the first line as exported.
      raw: {
        format: "FOCUS",
        lines: g.lines.length > LINES_KEPT ? [...g.lines.slice(0, LINES_KEPT), `and ${g.lines.length - LINES_KEPT} more`] : g.lines,
        sum: {
          BilledCost: decimalText(g.billed),
          ...(g.effective === null ? {} : { EffectiveCost: decimalText(g.effective) }),
          ...(g.quantity === null ? {} : { ConsumedQuantity: decimalText(g.quantity) }),
        },
        first: g.first,
      },
    });
  }
  return problems.any ? { ok: false, errors: problems.done() } : { ok: true, rows };
}
