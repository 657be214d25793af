import type { KillPeriod, SpendDay } from "@/lib/spend/daily";
import type { MonthToDateSpend } from "@/lib/spend/month";
import { formatDay, formatInstant, formatMoneyParts, formatUnits, type SpendMode } from "@/lib/format";
import { microsOfUnits } from "@/lib/money/price";
import { DAY_MS, utcDay } from "@/lib/time";

// Pure shaping of prepared spend data for the chart components: which day bands a kill shades,
// the rows a chart plots in units or money, and the sentences that summarise each chart.

export type KillBand = { x1: string; x2: string; label: string };

/**
 * Money as a chart's sentence says it, in cents like the dashboard's other amounts: "$1.20", or
 * "at most $1.20" for an endpoint of several priced parts, whose counters hold units of any part
 * and are priced at the dearest.
 */
export function moneyText(micros: number, currency: string, atMost: boolean): string {
  const text = formatMoneyParts(micros, currency).text;
  return atMost ? `at most ${text}` : text;
}

/**
 * The first and last day each kill covers on a day axis. A kill that ended exactly at midnight
 * does not shade the day that began then; one still in force runs to the last day.
 */
export function killBands(days: readonly string[], kills: readonly KillPeriod[]): KillBand[] {
  const first = days[0];
  const last = days[days.length - 1];
  if (first === undefined || last === undefined) return [];
  const bands: KillBand[] = [];
  for (const k of kills) {
    const x1 = utcDay(k.start) < first ? first : utcDay(k.start);
    const x2 = k.end === null ? last : utcDay(Math.max(k.start, k.end - 1));
    if (x1 > last || x2 < first) continue;
    const label = k.end === null ? `killed since ${formatInstant(k.start)}` : `killed ${formatInstant(k.start)} to ${formatInstant(k.end)}`;
    bands.push({ x1, x2: x2 > last ? last : x2, label });
  }
  return bands;
}

/** Whether any kill overlaps the UTC day `day`. */
export function killedOn(day: string, kills: readonly KillPeriod[]): boolean {
  const start = Date.parse(`${day}T00:00:00Z`);
  const end = start + DAY_MS;
  return kills.some((k) => k.start < end && (k.end === null || k.end > start));
}

export type DailyRow = {
  day: string;
  spend: number;
  ceiling: number | null;
  killed: boolean;
  source: SpendDay;
};

/** Rows in the chosen mode: money is units × price (picos a unit) rounded up, the ceiling converted the same way. */
export function dailyRows(days: readonly SpendDay[], kills: readonly KillPeriod[], mode: SpendMode, pricePico: number): DailyRow[] {
  return days.map((d) => ({
    day: d.day,
    spend: mode === "units" ? d.units : d.moneyMicros,
    ceiling: d.ceiling === null ? null : mode === "units" ? d.ceiling : microsOfUnits(d.ceiling, pricePico),
    killed: killedOn(d.day, kills),
    source: d,
  }));
}

/** Whether the daily ceiling ended the day at another value than it started it with. */
export function ceilingMoved(d: SpendDay): boolean {
  return d.ceilingAtStart !== null && d.ceiling !== null && d.ceilingAtStart !== d.ceiling;
}

export type DailySummaryInput = {
  days: readonly SpendDay[];
  kills: readonly KillPeriod[];
  unit: string;
  currency: string;
  totalUnits: number;
  totalMoneyMicros: number;
  /** Several priced parts: the money is an upper bound. */
  moneyAtMost?: boolean;
};

/** One sentence that says what the daily chart shows, for its caption and screen readers. */
export function dailySummary(s: DailySummaryInput): string {
  const first = s.days[0];
  const last = s.days[s.days.length - 1];
  if (!first || !last) return "No days to show.";
  let busiest = first;
  for (const d of s.days) if (d.units > busiest.units) busiest = d;
  const parts = [
    `${s.days.length} days from ${formatDay(first.day)} to ${formatDay(last.day)} (UTC):`,
    `${formatUnits(s.totalUnits, s.unit)}, ${moneyText(s.totalMoneyMicros, s.currency, s.moneyAtMost ?? false)}.`,
  ];
  if (busiest.units > 0) parts.push(`Busiest day ${formatDay(busiest.day)} with ${formatUnits(busiest.units, s.unit)}.`);
  // A kill restored the same day changes nothing by the day's end; the kill count says it instead.
  const changed = s.days.filter((d) => ceilingMoved(d)).length;
  if (last.ceiling !== null) {
    parts.push(`Daily ceiling now ${formatUnits(last.ceiling, s.unit)}${changed > 0 ? `, changed on ${changed} day${changed === 1 ? "" : "s"}` : ""}.`);
  }
  if (s.kills.length > 0) parts.push(`Killed ${s.kills.length} time${s.kills.length === 1 ? "" : "s"} in this range.`);
  return parts.join(" ");
}

export type SparkPoint = { day: string; units: number; moneyMicros: number };

export function sparklineSummary(
  points: readonly SparkPoint[],
  unit: string,
  currency: string,
  totalUnits: number,
  totalMoneyMicros: number,
  moneyAtMost = false,
): string {
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last) return "No spend history.";
  let busiest = first;
  for (const p of points) if (p.units > busiest.units) busiest = p;
  const peak = busiest.units > 0 ? `; busiest ${formatDay(busiest.day)} with ${formatUnits(busiest.units, unit)}` : "";
  return `Last ${points.length} days: ${formatUnits(totalUnits, unit)} (${moneyText(totalMoneyMicros, currency, moneyAtMost)})${peak}; today so far ${formatUnits(last.units, unit)}.`;
}

/** What the month-to-date chart shows, in one paragraph; also its accessible description. */
export function monthSummary(m: MonthToDateSpend): string {
  const unit = m.unit;
  const lastDay = m.days[m.days.length - 1]?.day ?? m.end;
  const parts = [
    `Billing month ${formatDay(m.start)} to ${formatDay(lastDay)} (UTC, from day ${m.billingDay}):`,
    `${formatUnits(m.spentUnits, unit)} (${moneyText(m.spentMicros, m.currency, m.moneyAtMost)}) so far`,
  ];
  if (m.allowance !== null) {
    parts[1] += ` of a ${formatUnits(m.allowance, unit)} plan allowance.`;
  } else {
    parts[1] += "; no plan allowance is set.";
  }
  parts.push(
    `At the average so far (${formatUnits(m.averageDailyUnits, unit)} a day) the month ends near ${formatUnits(m.projectedUnits, unit)} (${moneyText(m.projectedMicros, m.currency, m.moneyAtMost)})${
      m.allowance !== null && m.projectedUnits > m.allowance ? ", above the allowance" : ""
    }.`,
  );
  return parts.join(" ");
}
