import { billingMonthWindow, utcDayWindow } from "@/lib/limits/windows";
import type { CeilingCounterRow } from "@/lib/counters/insert";
import type { CeilingRef, DemoCeiling, DemoEndpoint } from "./catalog";
import { DEMO_CALLERS } from "./catalog";
import { distributeCapped, type Random } from "./random";

// Usage history for the demo: settled counts per UTC day and per billing month, shaped like real
// traffic (weekly rhythm, slow growth, noise) and never above the ceilings in force.

export const HISTORY_DAYS = 35;
const DAY_MS = 86_400_000;

export type SeededCeiling = DemoCeiling & { id: number; limitId: number };
export type SeededEndpoint = {
  def: DemoEndpoint;
  id: number;
  ceilings: Partial<Record<CeilingRef, SeededCeiling>>;
};

export type UsageRow = CeilingCounterRow;

export type DaySpend = {
  day: Date;
  units: number;
  calls: number;
  /** Units per billing account, for endpoints with a per-caller ceiling. */
  byCaller: Map<string, number>;
  /** Calls per billing account (the counter's grant count). */
  callsByCaller: Map<string, number>;
};

/** Days ago on which an endpoint's traffic ran into its daily ceiling. */
export const CAP_DAYS: Readonly<Record<DemoEndpoint["key"], number | undefined>> = {
  "email.subscribe": 3,
  "llm.chat": 9,
  "llm.gpt-4o": undefined,
  "llm.claude-sonnet": undefined,
  "llm.embed": undefined,
  "sms.password-reset": 12,
  "webhook.notify": undefined,
};

/** Days ago on which webhook.notify was killed for 45 minutes (see the incidents). */
export const KILL_DAY = 8;

export function callerPool(def: DemoEndpoint): readonly string[] {
  return def.key.startsWith("llm.") ? DEMO_CALLERS : DEMO_CALLERS.slice(10, 40);
}

function callerWeights(pool: readonly string[], random: Random): number[] {
  // A few heavy accounts and a long tail, shuffled a little from day to day.
  return pool.map((_, i) => random.between(0.6, 1.4) / (i + 1) ** 0.9);
}

/** Daily spend of one endpoint, oldest day first; today counts only the part of the day gone by. */
export function dailySpend(ep: SeededEndpoint, now: Date, random: Random): DaySpend[] {
  const { def, ceilings } = ep;
  const today = utcDayWindow(now).start.getTime();
  const elapsed = Math.max(0.15, (now.getTime() - today) / DAY_MS);
  const monthTotals = new Map<number, number>();
  const days: DaySpend[] = [];
  for (let ago = HISTORY_DAYS - 1; ago >= 0; ago--) {
    const day = new Date(today - ago * DAY_MS);
    const weekday = day.getUTCDay();
    const rhythm = weekday === 0 || weekday === 6 ? 0.72 : 1;
    const trend = 0.85 + 0.15 * (1 - ago / HISTORY_DAYS);
    let units = Math.round(def.typicalDailyUnits * trend * rhythm * random.between(0.85, 1.15) * (ago === 0 ? elapsed : 1));
    if (ago === KILL_DAY && def.key === "webhook.notify") units = Math.round(units * 0.97);
    const dayCeiling = ceilings.day_units?.value;
    if (dayCeiling !== undefined) {
      if (CAP_DAYS[def.key] === ago) units = dayCeiling;
      units = Math.min(units, dayCeiling);
    }
    const month = ceilings.month_units;
    if (month) {
      const start = billingMonthWindow(day, def.billingDay ?? 1).start.getTime();
      const used = monthTotals.get(start) ?? 0;
      units = Math.min(units, month.value - used);
      monthTotals.set(start, used + units);
    }
    const byCaller = new Map<string, number>();
    const callsByCaller = new Map<string, number>();
    const perCaller = ceilings.caller_day_units;
    if (perCaller) {
      const pool = callerPool(def);
      const shares = distributeCapped(units, callerWeights(pool, random), perCaller.value);
      units = 0;
      shares.forEach((n, i) => {
        const caller = pool[i];
        if (n > 0 && caller) {
          byCaller.set(caller, n);
          callsByCaller.set(caller, Math.max(1, Math.round(n / def.unitsPerCall)));
          units += n;
        }
      });
    }
    let calls = def.unitsPerCall === 1 ? units : Math.round(units / (def.unitsPerCall * random.between(0.9, 1.1)));
    const callCeiling = ceilings.day_calls?.value;
    if (callCeiling !== undefined) calls = Math.min(calls, callCeiling);
    if (units > 0) calls = Math.max(1, calls);
    days.push({ day, units, calls, byCaller, callsByCaller });
  }
  return days;
}

/** Usage rows for the calendar-window ceilings of one endpoint, from its daily spend. */
export function calendarUsageRows(ep: SeededEndpoint, days: readonly DaySpend[]): UsageRow[] {
  const rows: UsageRow[] = [];
  const { ceilings, def } = ep;
  const months = new Map<number, { start: Date; end: Date; units: number; calls: number }>();
  for (const d of days) {
    const window = utcDayWindow(d.day);
    const base = { scopeKey: "", windowStart: window.start, windowEnd: window.end, held: 0 };
    if (ceilings.day_units) rows.push({ ...base, ceilingId: ceilings.day_units.id, settled: d.units, reservations: d.calls });
    if (ceilings.day_calls) rows.push({ ...base, ceilingId: ceilings.day_calls.id, settled: d.calls, reservations: d.calls });
    const perCaller = ceilings.caller_day_units;
    if (perCaller) {
      for (const [caller, n] of d.byCaller) {
        const calls = d.callsByCaller.get(caller) ?? 0;
        rows.push({ ...base, ceilingId: perCaller.id, scopeKey: caller, settled: n, reservations: calls });
      }
    }
    if (ceilings.month_units) {
      const m = billingMonthWindow(d.day, def.billingDay ?? 1);
      const entry = months.get(m.start.getTime()) ?? { ...m, units: 0, calls: 0 };
      entry.units += d.units;
      entry.calls += d.calls;
      months.set(m.start.getTime(), entry);
    }
  }
  const month = ceilings.month_units;
  if (month) {
    for (const m of months.values()) {
      rows.push({
        ceilingId: month.id,
        scopeKey: "",
        windowStart: m.start,
        windowEnd: m.end,
        held: 0,
        settled: m.units,
        reservations: m.calls,
      });
    }
  }
  return rows;
}

/**
 * The counters a seeded database holds must be ones enforcement could have produced: every
 * calendar counter within its ceiling. A generator bug fails the seed here instead of being
 * written.
 */
export function checkWithinCeilings(ep: SeededEndpoint, rows: readonly UsageRow[]): void {
  for (const row of rows) {
    const ceiling = Object.values(ep.ceilings).find((c) => c.id === row.ceilingId);
    if (!ceiling) throw new Error(`demo seed: usage row for unknown ceiling ${row.ceilingId}`);
    const used = Number(row.settled ?? 0) + Number(row.held ?? 0);
    if (used > ceiling.value) {
      throw new Error(`demo seed: ${ep.def.key} ${ceiling.ref} ${row.scopeKey} at ${row.windowStart.toISOString()} uses ${used} of ${ceiling.value}`);
    }
  }
}
