import { describeGuarantee, unitLabel } from "@/lib/limits/guarantee";
import { formatCount, formatMoney } from "@/lib/format";
import { dearestPrice, microsOfUnits } from "@/lib/money/price";
import { PICOS_PER_MICRO } from "@/lib/vocabulary";
import type { CeilingSpec, EndpointFields } from "./spec";

// The worst case an endpoint can cost, stated before anything is saved: only global ceilings bound
// it (per-caller ceilings and cooldowns multiply with accounts and destinations), and a ceiling of
// one window bounds the other (a day's cap × 31 bounds a month; a month's cap bounds any day in it).
// Ceilings count units whatever part they are of, so every unit could be of the dearest part: the
// money of a worst case is its units at the dearest part's price, rounded up to a whole micro.

export type WorstCase = { units: number; micros: number } | null;
export type WorstCases = { day: WorstCase; month: WorstCase };

type Shape = Pick<CeilingSpec, "metric" | "scope" | "window" | "value">;
type Fields = Pick<EndpointFields, "perCallMax" | "parts">;

const MAX_DAYS_IN_BILLING_MONTH = 31;

/** Units at the dearest part's price, in micros rounded up (past 2^53 units only a display figure). */
function worstMicros(units: number, e: Fields): number {
  const price = dearestPrice(e.parts);
  return Number.isSafeInteger(units) ? microsOfUnits(units, price) : Math.ceil((units * price) / PICOS_PER_MICRO);
}

function unitsOf(c: Shape, e: Fields): number {
  return c.metric === "units" ? c.value : c.value * e.perCallMax;
}

export function worstCases(ceilings: readonly Shape[], e: Fields): WorstCases {
  let day = Number.POSITIVE_INFINITY;
  let month = Number.POSITIVE_INFINITY;
  for (const c of ceilings) {
    if (c.scope !== "global" || c.window === "first_hit") continue;
    const units = unitsOf(c, e);
    if (c.window === "utc_day") {
      day = Math.min(day, units);
      month = Math.min(month, units * MAX_DAYS_IN_BILLING_MONTH);
    } else {
      day = Math.min(day, units);
      month = Math.min(month, units);
    }
  }
  const price = (units: number): WorstCase => (Number.isFinite(units) ? { units, micros: worstMicros(units, e) } : null);
  return { day: price(day), month: price(month) };
}

export function describeWorstCase(w: WorstCase, per: "day" | "month", e: Pick<EndpointFields, "unit" | "currency">): string {
  if (w === null) return `unbounded: no global ceiling limits a ${per}`;
  return `${formatMoney(w.micros, e.currency)} a ${per} (${formatCount(w.units)} ${unitLabel(e.unit, w.units)})`;
}

export type CeilingSentence = { guarantee: string; worstCase: string | null };

/** "at most 100 emails per UTC day" and, for a global ceiling, "worst case $1.20 a day (100 emails)". */
export function ceilingSentence(c: CeilingSpec, e: EndpointFields & { key: string }): CeilingSentence {
  const guarantee = describeGuarantee(
    { metric: c.metric, scope: c.scope, window: c.window, windowSeconds: c.windowSeconds ?? null, value: c.value, destinationKind: c.destinationKind ?? null },
    { key: e.key, unit: e.unit, billingDay: e.billingDay, perCallMax: e.perCallMax },
  );
  if (c.scope !== "global" || c.window === "first_hit") return { guarantee, worstCase: null };
  const units = unitsOf(c, e);
  const per = c.window === "utc_day" ? "day" : "billing month";
  return { guarantee, worstCase: `worst case ${formatMoney(worstMicros(units, e), e.currency)} a ${per}` };
}

/** The defensible pair DESIGN derives from a plan: allowance / 30 per UTC day AND the allowance per billing month. */
export function proposedCeilings(planAllowance: number | null): CeilingSpec[] {
  if (planAllowance === null || planAllowance <= 0) return [];
  const daily = Math.max(1, Math.floor(planAllowance / 30));
  const bounds = (value: number) => ({ value, min: 0, max: Math.max(value * 2, 1), default: value });
  return [
    { metric: "units", scope: "global", window: "utc_day", ...bounds(daily), alertThresholds: [50, 80, 100] },
    { metric: "units", scope: "global", window: "billing_month", ...bounds(planAllowance), alertThresholds: [50, 80, 100] },
  ];
}
