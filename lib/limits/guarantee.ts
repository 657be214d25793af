import type { CeilingMetric, CeilingScope, CeilingWindow, DestinationKind } from "@/lib/vocabulary";
import { formatCount } from "@/lib/format";

// Every ceiling is stated as the sentence it guarantees ("at most 100 emails per UTC day"), so the
// worst case of an endpoint is something staff can read out, not infer from a form.

export type GuaranteeCeiling = {
  metric: CeilingMetric;
  scope: CeilingScope;
  window: CeilingWindow;
  windowSeconds: number | null;
  value: number;
  /** What a cooldown's destination is; without it, guessed from the endpoint key. */
  destinationKind?: DestinationKind | null;
};

export type GuaranteeEndpoint = { key: string; unit: string; billingDay: number; perCallMax: number };

/** "emails" with 1 → "email"; "email" with 2 → "emails". Units such as "sms" are left alone. */
export function unitLabel(unit: string, n: number): string {
  const word = unit.trim();
  if (/(ss|sms|us)$/i.test(word) || word.toUpperCase() === word) return word;
  const singular = word.endsWith("s") ? word.slice(0, -1) : word;
  return n === 1 ? singular : `${singular}s`;
}

export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  const suffix = { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

/** 86400 → "24 hours", 3600 → "hour", 90 → "90 seconds". */
export function durationLabel(seconds: number): string {
  const units: [number, string][] = [
    [86_400 * 7, "week"],
    [3_600, "hour"],
    [60, "minute"],
  ];
  // 24 hours reads better than "1 day" for a cooldown: it does not suggest a calendar day.
  for (const [size, name] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? name : `${formatCount(n)} ${name}s`;
    }
  }
  return seconds === 1 ? "second" : `${formatCount(seconds)} seconds`;
}

/** What one destination is called for this endpoint, for cooldown sentences. */
export function destinationLabel(endpointKey: string, kind?: GuaranteeCeiling["destinationKind"]): string {
  if (kind === "email") return "inbox";
  if (kind === "phone") return "phone number";
  if (kind === "other") return "destination";
  if (endpointKey.startsWith("email")) return "inbox";
  if (endpointKey.startsWith("sms")) return "phone number";
  return "destination";
}

export function windowLabel(c: Pick<GuaranteeCeiling, "window" | "windowSeconds">, billingDay: number): string {
  if (c.window === "utc_day") return "per UTC day";
  if (c.window === "billing_month") return `per billing month (from the ${ordinal(billingDay)})`;
  return `per ${durationLabel(c.windowSeconds ?? 0)}`;
}

export function describeGuarantee(c: GuaranteeCeiling, e: GuaranteeEndpoint): string {
  // With a per-call max of 1 a call is at most one unit, so "1 email" states the same limit as
  // "1 call" in the words the bill uses.
  const inUnits = c.metric === "units" || e.perCallMax === 1;
  const what = inUnits ? unitLabel(e.unit, c.value) : c.value === 1 ? "call" : "calls";
  const who = c.scope === "caller" ? " per billing account" : c.scope === "destination" ? ` per ${destinationLabel(e.key, c.destinationKind)}` : "";
  if (c.value === 0) {
    return `killed: no ${inUnits ? unitLabel(e.unit, 2) : "calls"} at all until restored`;
  }
  return `at most ${formatCount(c.value)} ${what}${who} ${windowLabel(c, e.billingDay)}`;
}

/** allowance / 30 per day; the monthly ceiling alongside it stops a 31-day month exceeding the plan. */
export const DAYS_PER_BILLING_MONTH = 30;

/** "3,000 a month ≈ 100 a day": the daily ceiling a plan allowance supports. */
export function derivedDefault(planAllowance: number | null, unit: string): { daily: number; sentence: string } | null {
  if (planAllowance === null) return null;
  const daily = Math.floor(planAllowance / DAYS_PER_BILLING_MONTH);
  return {
    daily,
    sentence: `${formatCount(planAllowance)} ${unitLabel(unit, planAllowance)} a month ≈ ${formatCount(daily)} a day`,
  };
}
