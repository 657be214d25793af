import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import type { WindowSpan } from "@/lib/limits/windows";
import { windowTotalsOf } from "@/lib/counters/window-totals";
import { Int, NullableInt, parseRows } from "@/lib/spend/source";
import { BUDGET_SCOPES, BUDGET_WINDOWS, type BudgetScope, type BudgetWindow } from "@/lib/vocabulary";
import { topAccountsNow, type AccountSpend } from "./read-accounts";
import { budgetState, crossedThreshold, windowProgress, type BudgetState, type WindowProgress } from "./read-view";

// The read side of budgets for the dashboard: each budget in its open window (the same window
// enforcement charges, from ceilings.window_bounds), its spend there, its state, pace and
// projection, and what each member endpoint contributed.

export type BudgetSummary = {
  id: number;
  key: string;
  name: string;
  currency: string;
  scope: BudgetScope;
  window: BudgetWindow;
  billingDay: number;
  /** Whole micros; per account for a per-account budget. */
  value: number;
  valueBeforeKill: number | null;
  minValue: number;
  maxValue: number;
  defaultValue: number;
  alertThresholds: number[];
  killedAt: Date | null;
  killedBy: string | null;
  archivedAt: Date | null;
  archivedBy: string | null;
  version: number;
  /** The open window at `now`. */
  span: WindowSpan;
  /** Micros held and settled in the open window: every account together for a per-account budget. */
  held: number;
  settled: number;
  spend: number;
  /** Accounts with a counter in the open window (per-account budgets; 0 for global ones). */
  accounts: number;
  /**
   * The account nearest its own value (its override, else its plan's value, else the budget's), per-account budgets only:
   * among the 50 that settled most and those with an override (money held for a call in flight
   * can reorder accounts for that long).
   */
  busiest: (AccountSpend & { projection: number | null }) | null;
  /** Spend against the value that binds: the budget's (global), the busiest account's (per account); 1 when killed. */
  ratio: number;
  /** Highest alert threshold (percent) crossed in the open window, or null. */
  crossed: number | null;
  state: BudgetState;
  /** Pace and projection of `spend` (for a per-account budget, the pace is of one account's value). */
  progress: WindowProgress;
};

/** One member's part of the open window's spend, from its reservations created in the window. */
export type MemberShare = { endpointId: number; key: string; name: string; archived: boolean; money: number; reservations: number };

export type BudgetOverview = BudgetSummary & {
  members: MemberShare[];
  /** The accounts that settled most in the open window (per-account budgets; empty for global ones). */
  topAccounts: AccountSpend[];
};

const Time = z.coerce.date();
// Sums of counters, which overruns (and many accounts) may take past 2^53 micros: read as the
// nearest double, never refused, so the overview and the Budgets page still open.
const Sum = z.coerce.number().refine(Number.isInteger, "not a whole number");
const SummaryRow = z.object({
  id: Int,
  key: z.string(),
  name: z.string(),
  currency: z.string(),
  scope: z.enum(BUDGET_SCOPES),
  window: z.enum(BUDGET_WINDOWS),
  billing_day: Int,
  value: Int,
  value_before_kill: NullableInt,
  min_value: Int,
  max_value: Int,
  default_value: Int,
  alert_thresholds: z.array(z.coerce.number()),
  killed_at: Time.nullable(),
  killed_by: z.string().nullable(),
  archived_at: Time.nullable(),
  archived_by: z.string().nullable(),
  version: Int,
  window_start: Time,
  window_end: Time,
  held: Sum,
  settled: Sum,
  accounts: Int,
  busiest_key: z.string().nullable(),
  busiest_held: Sum.nullable(),
  busiest_settled: Sum.nullable(),
  busiest_value: NullableInt,
});

/** The open window of budget `b` at `now`, as enforcement computes it. */
export function openWindow(now: Date): SQL {
  return sql`ceilings.window_bounds(b."window", b.billing_day, 0, ${now.toISOString()}::timestamptz)`;
}

/** Accounts without an override of their own considered for the busiest: the ones that settled most. */
const BUSIEST_CANDIDATES = 50;

async function readSummaries(db: Db, filter: SQL, now: Date): Promise<BudgetSummary[]> {
  const rows = parseRows(
    "budget summaries",
    SummaryRow,
    await db.execute(sql`
      select b.id, b.key, b.name, b.currency, b.scope::text as scope, b."window"::text as "window", b.billing_day,
        b.value, b.value_before_kill, b.min_value, b.max_value, b.default_value, b.alert_thresholds,
        b.killed_at, b.killed_by, b.archived_at, b.archived_by, b.version,
        w.window_start, w.window_end,
        coalesce(s.held, 0) as held, coalesce(s.settled, 0) as settled, coalesce(s.accounts, 0) as accounts,
        x.scope_key as busiest_key, x.held as busiest_held, x.settled as busiest_settled, x.value as busiest_value
      from budgets b
      cross join lateral ${openWindow(now)} w
      -- The open window's sums: from the worker for a budget of many accounts (lib/counters/window-totals.ts).
      left join (${windowTotalsOf("budget", sql`array(select b.id from budgets b where ${filter})`, { open: now })}) s
        on s.limit_id = b.id and s.window_start = w.window_start
      -- The account nearest its own value (override, plan or the budget's) binds first; a value of 0
      -- (an override, a plan, a block) refuses, it is not "full".
      -- Candidates: the accounts that settled most (an index range, however many accounts there
      -- are) and every account with an override of its own.
      left join lateral (
        select c.scope_key, c.held, c.settled, l.value
        from (
          (select u.scope_key, u.held, u.settled from budget_usage u
            where u.budget_id = b.id and u.window_start = w.window_start and u.scope_key <> ''
            order by u.settled desc limit ${BUSIEST_CANDIDATES})
          union
          (select u.scope_key, u.held, u.settled from limit_overrides bo
            join budget_usage u on u.budget_id = b.id and u.scope_key = bo.caller and u.window_start = w.window_start
            where bo.limit_id = b.limit_id)
        ) c
        cross join lateral ceilings.account_budget_limit(b.id, c.scope_key) l
        where b.scope = 'account' and l.value > 0
        order by (c.held + c.settled)::numeric / l.value desc, c.scope_key
        limit 1
      ) x on true
      where ${filter}
      order by b.key`),
  );
  return rows.map((r) => toSummary(r, now));
}

function toSummary(r: z.infer<typeof SummaryRow>, now: Date): BudgetSummary {
  const span = { start: r.window_start, end: r.window_end };
  const spend = r.held + r.settled;
  const busiest =
    r.busiest_key === null
      ? null
      : {
          account: r.busiest_key,
          held: r.busiest_held ?? 0,
          settled: r.busiest_settled ?? 0,
          spend: (r.busiest_held ?? 0) + (r.busiest_settled ?? 0),
          value: r.busiest_value ?? 0,
        };
  // What binds: the budget's value for a global budget, each account's own for a per-account one.
  const binding = r.scope === "global" ? { spend, value: r.value } : busiest ? { spend: busiest.spend, value: busiest.value } : { spend: 0, value: r.value };
  const crossed = crossedThreshold(binding.spend, binding.value, r.alert_thresholds);
  const killed = r.value === 0 || r.killed_at !== null;
  return {
    id: r.id,
    key: r.key,
    name: r.name,
    currency: r.currency,
    scope: r.scope,
    window: r.window,
    billingDay: r.billing_day,
    value: r.value,
    valueBeforeKill: r.value_before_kill,
    minValue: r.min_value,
    maxValue: r.max_value,
    defaultValue: r.default_value,
    alertThresholds: r.alert_thresholds,
    killedAt: r.killed_at,
    killedBy: r.killed_by,
    archivedAt: r.archived_at,
    archivedBy: r.archived_by,
    version: r.version,
    span,
    held: r.held,
    settled: r.settled,
    spend,
    accounts: r.accounts,
    busiest: busiest ? { ...busiest, projection: windowProgress({ ...span, now, spend: busiest.spend, value: busiest.value }).projection } : null,
    ratio: killed ? 1 : binding.value > 0 ? binding.spend / binding.value : 0,
    crossed,
    state: budgetState({ value: r.value, killedAt: r.killed_at, archivedAt: r.archived_at, crossed }),
    progress: windowProgress({ ...span, now, spend, value: r.value }),
  };
}

const ShareRow = z.object({ budget_id: Int, endpoint_id: Int, key: z.string(), name: z.string(), archived: z.boolean(), money: Sum, reservations: Int });

/**
 * Each member's money in the budget's open window. budget_usage counts the budget as a whole, so
 * this reads the members' reservations created in the window (reservations_endpoint_created_idx),
 * each for the budgets its charges name (a reservation made before its endpoint joined, or while
 * the budget was archived, charged it nothing): the worst case while held or expired (expiry counts
 * it spent), the actual once settled, nothing once released; an overrun reported after a release
 * or an expiry counts as resolve_charges charged it. An archived budget charges nothing, so its
 * members show nothing.
 */
async function readMemberShares(db: Db, filter: SQL, now: Date): Promise<Map<number, MemberShare[]>> {
  const rows = parseRows(
    "budget member shares",
    ShareRow,
    await db.execute(sql`
      with pairs as (
        select m.budget_id, m.endpoint_id, b.archived_at is null as charging, w.window_start, w.window_end
        from budgets b
        join budget_members m on m.budget_id = b.id
        cross join lateral ${openWindow(now)} w
        where ${filter}
      ),
      -- Budgets sharing a member and a window read its reservations once.
      spans as (select distinct endpoint_id, window_start, window_end from pairs where charging),
      spent as (
        select s.endpoint_id, s.window_start, cb.id as budget_id,
          coalesce(sum(ceilings.final_money(r)), 0)::bigint as money,
          count(*) as reservations
        from spans s
        join reservations r on r.endpoint_id = s.endpoint_id and r.created_at >= s.window_start and r.created_at < s.window_end
        cross join lateral unnest(r.charges) ch
        join budgets cb on cb.limit_id = ch.limit_id
        group by 1, 2, 3
      )
      select p.budget_id, e.id as endpoint_id, e.key, e.name, e.archived_at is not null as archived,
        coalesce(sp.money, 0) as money, coalesce(sp.reservations, 0) as reservations
      from pairs p
      join endpoints e on e.id = p.endpoint_id
      left join spent sp on p.charging and sp.endpoint_id = p.endpoint_id and sp.window_start = p.window_start and sp.budget_id = p.budget_id
      order by p.budget_id, coalesce(sp.money, 0) desc, e.key`),
  );
  const byBudget = new Map<number, MemberShare[]>();
  for (const r of rows) {
    const list = byBudget.get(r.budget_id) ?? [];
    list.push({ endpointId: r.endpoint_id, key: r.key, name: r.name, archived: r.archived, money: r.money, reservations: r.reservations });
    byBudget.set(r.budget_id, list);
  }
  return byBudget;
}

/** Top accounts shown per per-account budget on the Budgets page. */
export const LIST_TOP_ACCOUNTS = 3;

async function withMembers(db: Db, filter: SQL, now: Date, topLimit: number): Promise<BudgetOverview[]> {
  const [summaries, shares, top] = await Promise.all([
    readSummaries(db, filter, now),
    readMemberShares(db, filter, now),
    topAccountsNow(db, filter, now, topLimit),
  ]);
  return summaries.map((s) => ({ ...s, members: shares.get(s.id) ?? [], topAccounts: top.get(s.id) ?? [] }));
}

const stateRank: Record<BudgetState, number> = { killed: 0, alerting: 1, live: 2, archived: 3 };

/** Every budget in its open window: killed first, then alerting, then the fullest; archived last. */
export async function listBudgets(db: Db, p: { now?: Date } = {}): Promise<BudgetOverview[]> {
  const views = await withMembers(db, sql`true`, p.now ?? new Date(), LIST_TOP_ACCOUNTS);
  return views.sort((a, b) => stateRank[a.state] - stateRank[b.state] || b.ratio - a.ratio || a.key.localeCompare(b.key));
}

/**
 * Every budget in its open window without its members' shares or top accounts, in the same order
 * as listBudgets: what the overview leads with, at the cost of one statement whatever the members' traffic.
 */
export async function listBudgetSummaries(db: Db, p: { now?: Date } = {}): Promise<BudgetSummary[]> {
  const views = await readSummaries(db, sql`true`, p.now ?? new Date());
  return views.sort((a, b) => stateRank[a.state] - stateRank[b.state] || b.ratio - a.ratio || a.key.localeCompare(b.key));
}

/** One budget in its open window with its members and its top accounts (up to `topAccounts`), or null. */
export async function readBudgetOverview(db: Db, p: { key: string; now?: Date; topAccounts?: number }): Promise<BudgetOverview | null> {
  const [view] = await withMembers(db, sql`b.key = ${p.key}`, p.now ?? new Date(), p.topAccounts ?? 10);
  return view ?? null;
}

/** The budgets an endpoint is a member of, each with its spend in its open window; archived last. */
export async function budgetsOfEndpoint(db: Db, p: { endpointId: number; now?: Date }): Promise<BudgetSummary[]> {
  const rows = await readSummaries(db, sql`b.id in (select bm.budget_id from budget_members bm where bm.endpoint_id = ${p.endpointId})`, p.now ?? new Date());
  return rows.sort((a, b) => stateRank[a.state] - stateRank[b.state] || a.key.localeCompare(b.key));
}
