import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { windowFor, type WindowSpan } from "@/lib/limits/windows";
import { DAY_MS, utcDay } from "@/lib/time";
import { windowTotalsOf } from "@/lib/counters/window-totals";
import { Int, parseRows } from "@/lib/spend/source";
import type { BudgetScope, BudgetWindow } from "@/lib/vocabulary";

// A budget's spend per window (UTC day, or billing month) over the last 30 and 90 days, from its
// budget_usage counters, which are kept after their window closes. One read of 90 days serves both.

export const HISTORY_RANGES = [30, 90] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];

export type BudgetWindowSpend = {
  /** The window's first UTC day, 'YYYY-MM-DD'. */
  day: string;
  start: Date;
  end: Date;
  /** Held + settled in micros: every account together for a per-account budget. */
  spend: number;
  /** The account that spent most in the window (per-account budgets; 0 for global ones). */
  busiest: number;
  accounts: number;
  /** The budget's value in force at the window's end (or now, for the open window), from its audit events. */
  value: number;
};

export type BudgetHistory = { windows: BudgetWindowSpend[]; total: number };

type HistoryBudget = { id: number; key: string; value: number; scope: BudgetScope; window: BudgetWindow; billingDay: number };

/** The budget.* events that set a value, each with the value before and after (adjust, kill, restore, edit). */
export const VALUE_EVENTS = ["budget.create", "budget.update", "budget.adjust", "budget.kill", "budget.restore"] as const;

const ValueEvent = z.object({ at: z.coerce.date(), previous_value: z.union([z.null(), Int]), applied_value: Int });

/**
 * The value in force at each instant of `at`, from the append-only audit log: the last change
 * before it, else what the first change after it replaced, else the value now.
 */
export function valuesAt(events: z.infer<typeof ValueEvent>[], current: number, at: Date[]): number[] {
  return at.map((t) => {
    const before = events.filter((e) => e.at.getTime() < t.getTime()).at(-1);
    if (before) return before.applied_value;
    // Before the first change: what it replaced (a created budget replaced nothing: its first value).
    return events[0]?.previous_value ?? events[0]?.applied_value ?? current;
  });
}

/** The windows that overlap the last `days` UTC days up to `now`, oldest first. */
export function windowsBack(b: Pick<HistoryBudget, "window" | "billingDay">, now: Date, days: number): WindowSpan[] {
  const from = windowFor("utc_day", {}, now).start.getTime() - (days - 1) * DAY_MS;
  const spans: WindowSpan[] = [];
  let span = windowFor(b.window, { billingDay: b.billingDay }, now);
  while (span.end.getTime() > from) {
    spans.unshift(span);
    span = windowFor(b.window, { billingDay: b.billingDay }, new Date(span.start.getTime() - 1));
  }
  return spans;
}

// A window's spend sums counters, which an overrun may have taken past 2^53 micros: read as the
// nearest double (a page of money to the cent), never refused, so the budget's page still opens.
const Sum = z.coerce.number().refine(Number.isInteger, "not a whole number");
const Row = z.object({ window_start: z.coerce.date(), spend: Sum, busiest: Sum, accounts: Int });

/** Spend per window over the last 30 and the last 90 days, oldest first. */
export async function budgetHistory(db: Db, b: HistoryBudget, now: Date): Promise<Record<HistoryRange, BudgetHistory>> {
  const spans = windowsBack(b, now, 90);
  const first = spans[0];
  const last = spans.at(-1);
  if (!first || !last) return { 30: { windows: [], total: 0 }, 90: { windows: [], total: 0 } };
  // A per-account budget has a counter per account and window: the windows' sums come from the
  // worker where it has them (lib/counters/window-totals.ts), in the budget's scope.
  const rows = parseRows(
    "budget history",
    Row,
    await db.execute(sql`
      select w.window_start, (w.held + w.settled)::bigint as spend, w.busiest, w.accounts
      from (${windowTotalsOf("budget", [b.id], { from: first.start, to: new Date(last.start.getTime() + 1), now })}) w
      where w.counters > 0`),
  );
  const events = parseRows(
    "budget value events",
    ValueEvent,
    await db.execute(sql`
      select ae.at, ae.previous_value, ae.applied_value from audit_events ae
      where ae.target = ${b.key} and ae.action in (${sql.join(
        VALUE_EVENTS.map((a) => sql`${a}`),
        sql`, `,
      )}) and ae.applied_value is not null
      order by ae.at, ae.id`),
  );
  const values = valuesAt(
    events,
    b.value,
    spans.map((s) => (s.end.getTime() > now.getTime() ? now : s.end)),
  );
  const windows: BudgetWindowSpend[] = spans.map((s, i) => ({
    day: utcDay(s.start.getTime()),
    start: s.start,
    end: s.end,
    spend: 0,
    busiest: 0,
    accounts: 0,
    value: values[i] ?? b.value,
  }));
  // By containment rather than equal starts: a billing day changed mid-range moves the windows.
  for (const r of rows) {
    const at = r.window_start.getTime();
    const w = windows.find((x) => x.start.getTime() <= at && at < x.end.getTime());
    if (!w) continue;
    w.spend += r.spend;
    w.busiest = Math.max(w.busiest, r.busiest);
    w.accounts += r.accounts;
  }
  const range = (days: HistoryRange): BudgetHistory => {
    const from = windowFor("utc_day", {}, now).start.getTime() - (days - 1) * DAY_MS;
    const within = windows.filter((w) => w.end.getTime() > from);
    return { windows: within, total: within.reduce((sum, w) => sum + w.spend, 0) };
  };
  return { 30: range(30), 90: range(90) };
}
