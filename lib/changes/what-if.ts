import { eq, inArray, sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { budgetMembers, budgets, ceilings, endpoints } from "@/db/schema";
import { DomainError, InputError } from "@/lib/errors";
import { billingMonthWindow } from "@/lib/limits/windows";
import { DAY_MS, utcDay } from "@/lib/time";
import type { BudgetScope, CeilingMetric, CeilingScope, CeilingWindow } from "@/lib/vocabulary";
import { readGrants, type GrantField } from "./what-if-days";
import { accountsSince, replayFast, tally, type ReplayMetric, type ReplayQuery, type ReplayResult, type ReplayScope } from "./what-if-replay";

// What a value would have refused: the reservations ledger replayed against it.
//
// The model (the brute-force test in what-if.int.test.ts replays exactly this from the raw rows):
// - Grants: the reservations of the endpoint (of every member endpoint, for a budget), in
//   (created_at, id) order. Calls refused in reality never became reservations and are not replayed.
// - Counters: one per scope key (global: one; caller / account: the reservation's caller;
//   destination: its destination_key) and window: utc_day, or billing_month from the billing day
//   (the endpoint's for a ceiling, the budget's own for a budget). A first_hit cooldown opens at
//   the first grant of its destination that finds no window open (granted or not: reserve_batch
//   creates the counter before it decides) and lasts window_seconds.
// - Replay from the start of the window open at the first reported day (UTC midnight, `days`
//   days back including today), so a billing month counts what it held before; a cooldown starts
//   empty there. Only grants from that midnight to `now` are reported.
// - Check and charge: a grant is refused when counter + check > limit, or the limit is 0 (as
//   reserve_batch refuses even a free call then). The check is what reserve checked: amount
//   (units), 1 (calls), money (budgets). A granted grant adds what it finally charged, as the
//   counters hold it once resolved: settled -> settled_amount (settled_money), held -> amount
//   (money), expired -> the amount or its overrun if larger, released -> nothing, or its overrun
//   settled after the release; calls: 1, and 0 for a release without overrun. The charge is
//   applied when the grant is made: when the reservation resolved is not replayed. A refused
//   grant adds nothing.
// - Limit: the value, except per-caller ceilings and per-account budgets, where an account's own
//   override or plan value binds it (caller_limit's rule; a value of 0 binds everyone). Blocks and
//   kills of other ceilings are not part of the question and are not replayed.
// - Refused money: what the refused grant finally cost (the charge rule above, in money).
// - Top accounts: the five with the most refused money, then the most refused calls, then by name.

export class WhatIfError extends DomainError<"not_found"> {
  override name = "WhatIfError";
}

export type WhatIfCeilingSpec = { metric: CeilingMetric; scope: CeilingScope; window: CeilingWindow; windowSeconds?: number | null };
export type WhatIfBudgetSpec = { endpointKeys: string[]; scope: BudgetScope; window: "utc_day" | "billing_month"; billingDay?: number; currency?: string };

export type WhatIfParams = {
  ceilingId?: number;
  budgetId?: number;
  /** A budget by its key (the dashboard's forms name budgets by key). */
  budgetKey?: string;
  /** With newCeiling: the endpoint the new ceiling would be on. */
  endpointKey?: string;
  newCeiling?: WhatIfCeilingSpec;
  /** A new budget over these endpoints (their ledgers together). */
  newBudget?: WhatIfBudgetSpec;
  value: number;
  days: 7 | 30;
  now?: Date;
};

export type WhatIfDay = { day: string; granted: number; refused: number; refusedMoney: number };
export type WhatIfAccount = { account: string; refused: number; refusedMoney: number };
export type WhatIfResult = {
  days: WhatIfDay[];
  refused: number;
  refusedMoney: number;
  currency: string;
  topAccounts: WhatIfAccount[];
  ms: number;
};

/** The counter a value applies to, resolved from the target. */
export type WhatIfTarget = {
  endpointIds: number[];
  metric: ReplayMetric;
  scope: ReplayScope;
  window: CeilingWindow;
  windowSeconds: number | null;
  billingDay: number;
  currency: string;
  limits: ReplayQuery["limits"];
  skip: ReplayQuery["skip"];
};

const TOP_ACCOUNTS = 5;

export async function resolveTarget(db: Db, p: Omit<WhatIfParams, "value" | "days" | "now">): Promise<WhatIfTarget> {
  const given = [
    p.ceilingId !== undefined,
    p.budgetId !== undefined || p.budgetKey !== undefined,
    p.newCeiling !== undefined,
    p.newBudget !== undefined,
  ].filter(Boolean).length;
  if (given !== 1) throw InputError.of("name one of a ceiling, a budget, a new ceiling or a new budget");
  if (p.ceilingId !== undefined) {
    const [row] = await db
      .select({ c: ceilings, billingDay: endpoints.billingDay, currency: endpoints.currency, perCallMax: endpoints.perCallMax })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(eq(ceilings.id, p.ceilingId));
    if (!row) throw new WhatIfError("not_found", `no ceiling ${p.ceilingId}`);
    const { c } = row;
    return {
      endpointIds: [c.endpointId],
      metric: c.metric,
      scope: c.scope,
      window: c.window,
      windowSeconds: c.windowSeconds,
      billingDay: row.billingDay,
      currency: row.currency,
      limits: c.scope === "caller" ? { ceilingId: c.id } : null,
      // Its usage rows let whole days be skipped; a reservation's amount was at most the per-call
      // max when it was granted (a per-call max lowered within the period makes this bound low).
      skip: c.window === "utc_day" ? { ceilingId: c.id, maxCheck: c.metric === "calls" ? 1 : row.perCallMax, completeFrom: c.createdAt } : null,
    };
  }
  if (p.budgetId !== undefined || p.budgetKey !== undefined) {
    const [b] = await db
      .select()
      .from(budgets)
      .where(p.budgetId !== undefined ? eq(budgets.id, p.budgetId) : eq(budgets.key, p.budgetKey ?? ""));
    if (!b) throw new WhatIfError("not_found", `no budget ${p.budgetId ?? p.budgetKey}`);
    const members = await db.select({ id: budgetMembers.endpointId }).from(budgetMembers).where(eq(budgetMembers.budgetId, b.id));
    return {
      endpointIds: members.map((m) => m.id),
      metric: "money",
      scope: b.scope === "account" ? "caller" : "global",
      window: b.window,
      windowSeconds: null,
      billingDay: b.billingDay,
      currency: b.currency,
      limits: b.scope === "account" ? { budgetId: b.id } : null,
      skip: null,
    };
  }
  if (p.newCeiling !== undefined) {
    if (!p.endpointKey) throw InputError.of("a new ceiling needs its endpoint");
    const [ep] = await db.select().from(endpoints).where(eq(endpoints.key, p.endpointKey));
    if (!ep) throw new WhatIfError("not_found", `no endpoint ${p.endpointKey}`);
    const s = p.newCeiling;
    if (s.window === "first_hit" && !(Number.isInteger(s.windowSeconds) && (s.windowSeconds ?? 0) > 0)) {
      throw InputError.of("a first_hit window needs a whole positive number of seconds");
    }
    return {
      endpointIds: [ep.id],
      metric: s.metric,
      scope: s.scope,
      window: s.window,
      windowSeconds: s.window === "first_hit" ? (s.windowSeconds ?? null) : null,
      billingDay: ep.billingDay,
      currency: ep.currency,
      limits: null,
      skip: null,
    };
  }
  const s = p.newBudget;
  if (s === undefined) throw InputError.of("name one of a ceiling, a budget, a new ceiling or a new budget");
  const eps = s.endpointKeys.length ? await db.select().from(endpoints).where(inArray(endpoints.key, s.endpointKeys)) : [];
  if (eps.length !== new Set(s.endpointKeys).size) throw new WhatIfError("not_found", "a budget member is not a known endpoint");
  return {
    endpointIds: eps.map((e) => e.id),
    metric: "money",
    scope: s.scope === "account" ? "caller" : "global",
    window: s.window,
    windowSeconds: null,
    billingDay: s.billingDay ?? 1,
    currency: s.currency ?? eps[0]?.currency ?? "USD",
    limits: null,
    skip: null,
  };
}

/** The first reported instant: UTC midnight `days - 1` days before now's day. */
export function periodStart(now: Date, days: number): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * DAY_MS);
}

export async function whatIf(db: Db, p: WhatIfParams): Promise<WhatIfResult> {
  const started = performance.now();
  if (!Number.isSafeInteger(p.value) || p.value < 0) throw InputError.of("the value must be a whole number, 0 or more");
  if (p.days !== 7 && p.days !== 30) throw InputError.of("days must be 7 or 30");
  const now = p.now ?? new Date();
  const target = await resolveTarget(db, p);
  const since = periodStart(now, p.days);
  const replayed = await replayTarget(db, target, p.value, since, now);
  return summarize(replayed, target.currency, since, p.days, performance.now() - started);
}

/**
 * The last 7 and 30 days at once, for the panel. With calendar windows one replay serves both:
 * the 7-day replay starts at the window open 7 days back, where the 30-day one has the same
 * counter (windows are independent), so its last 7 days are the same numbers. A cooldown starts
 * empty where its replay starts, so it is replayed twice.
 */
export async function whatIfLast7And30(db: Db, p: Omit<WhatIfParams, "days">): Promise<{ d7: WhatIfResult; d30: WhatIfResult }> {
  const started = performance.now();
  if (!Number.isSafeInteger(p.value) || p.value < 0) throw InputError.of("the value must be a whole number, 0 or more");
  const now = p.now ?? new Date();
  const target = await resolveTarget(db, p);
  if (target.window === "first_hit") {
    const [d7, d30] = await Promise.all([whatIf(db, { ...p, now, days: 7 }), whatIf(db, { ...p, now, days: 30 })]);
    return { d7, d30 };
  }
  const replayed = await replayTarget(db, target, p.value, periodStart(now, 30), now);
  const ms = performance.now() - started;
  return { d7: summarize(replayed, target.currency, periodStart(now, 7), 7, ms), d30: summarize(replayed, target.currency, periodStart(now, 30), 30, ms) };
}

export async function replayTarget(db: Db, t: WhatIfTarget, value: number, since: Date, until: Date): Promise<ReplayResult> {
  if (t.endpointIds.length === 0) return { days: new Map(), accounts: new Map() };
  if (t.window === "first_hit") return replayCooldowns(db, t, value, since, until);
  const from = t.window === "billing_month" ? billingMonthWindow(since, t.billingDay).start : since;
  return replayFast(db, {
    endpointIds: t.endpointIds,
    metric: t.metric,
    scope: t.scope,
    window: t.window,
    billingDay: t.billingDay,
    value,
    from,
    since,
    until,
    limits: t.limits,
    skip: t.skip,
  });
}

// Cooldowns (destination scope, first_hit windows) open at a grant, so a counter's window is
// known only by replaying its destination's grants in order, from empty where the replay starts.
async function replayCooldowns(db: Db, t: WhatIfTarget, value: number, since: Date, until: Date): Promise<ReplayResult> {
  const days: string[] = [];
  for (let at = since.getTime(); at < until.getTime(); at += DAY_MS) days.push(utcDay(at));
  const fields = new Set<GrantField>(["at", "destination", "caller", "finalMoney", t.metric === "calls" ? "free" : "amount"]);
  if (t.metric !== "calls") fields.add("finalUnits");
  const read = await readGrants(db, t.endpointIds, days, until, fields);
  const open = new Map<string, { end: number; used: number }>();
  const result: ReplayResult = { days: new Map(), accounts: new Map() };
  const lengthUs = (t.windowSeconds ?? 0) * 1_000_000;
  for (const { day, grants: g } of read) {
    for (let i = 0; i < g.n; i += 1) {
      const at = g.at[i] ?? 0;
      const destination = g.destinations[g.destination[i] ?? 0] ?? "";
      let w = open.get(destination);
      if (!w || w.end <= at) {
        w = { end: at + lengthUs, used: 0 };
        open.set(destination, w);
      }
      const check = t.metric === "calls" ? 1 : (g.amount[i] ?? 0);
      const refused = value === 0 || w.used + check > value;
      if (!refused) w.used += t.metric === "calls" ? 1 - (g.free[i] ?? 0) : (g.finalUnits[i] ?? 0);
      tally(result, day, g.callers[g.caller[i] ?? 0] ?? "", refused, g.finalMoney[i] ?? 0);
    }
  }
  return result;
}

function summarize(r: ReplayResult, currency: string, since: Date, days: number, ms: number): WhatIfResult {
  const list: WhatIfDay[] = [];
  for (let i = 0; i < days; i += 1) {
    const day = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    const d = r.days.get(day);
    list.push({ day, granted: d?.granted ?? 0, refused: d?.refused ?? 0, refusedMoney: d?.refusedMoney ?? 0 });
  }
  const topAccounts = [...accountsSince(r, since.toISOString().slice(0, 10)).entries()]
    .map(([account, a]) => ({ account, ...a }))
    .filter((a) => a.refused > 0)
    .sort((a, b) => b.refusedMoney - a.refusedMoney || b.refused - a.refused || (a.account < b.account ? -1 : a.account > b.account ? 1 : 0))
    .slice(0, TOP_ACCOUNTS);
  return {
    days: list,
    refused: list.reduce((n, d) => n + d.refused, 0),
    refusedMoney: list.reduce((n, d) => n + d.refusedMoney, 0),
    currency,
    topAccounts,
    ms,
  };
}

/** True when the endpoint(s) have any reservation in the last 30 days: the new forms show the panel then. */
export async function hasHistory(db: Db, endpointIds: number[], now = new Date()): Promise<boolean> {
  if (endpointIds.length === 0) return false;
  const rows = resultRows<{ x: number }>(
    await db.execute(sql`select 1 as x from reservations r
      where r.endpoint_id = any(${sql.raw(`'{${endpointIds.map(Number).join(",")}}'::int[]`)}) and r.created_at >= ${periodStart(now, 30).toISOString()}::timestamptz limit 1`),
  );
  return rows.length > 0;
}
