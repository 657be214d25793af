import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { CeilingMetric, CeilingScope, CeilingWindow, LimitSource } from "@/lib/vocabulary";

export type CeilingStatus = {
  ceilingId: number;
  metric: CeilingMetric;
  scope: CeilingScope;
  /** The value in force for this account: its override, else its plan's value, else the ceiling's (0 when killed or blocked). */
  value: number;
  override: boolean;
  /** Why `value` binds: the ceiling's own value, the account's plan or override, a kill, a block. */
  source: LimitSource;
  /** When the account's override ends by itself (source override); null when it lasts or another source binds. */
  overrideEndsAt: string | null;
  killed: boolean;
  window: { kind: CeilingWindow; start: string | null; end: string | null; seconds: number | null };
  /** Counters of the current window; null for cooldowns (one per destination) and for per-caller ceilings without an account. */
  settled: number | null;
  held: number | null;
  used: number | null;
  remaining: number | null;
};

/** A budget the endpoint belongs to, in micros (millionths) of its currency, for the account asked about. */
export type BudgetStatus = {
  budgetId: number;
  /** The budget's key. */
  budget: string;
  name: string;
  currency: string;
  scope: "global" | "account";
  /** The value in force: a per-account budget's for the account (override, plan, block), else the budget's own; 0 when killed. */
  value: number;
  source: "budget" | "plan" | "override" | "kill" | "blocked";
  /** When the account's override ends by itself (source override); null when it lasts or another source binds. */
  overrideEndsAt: string | null;
  killed: boolean;
  window: { kind: "utc_day" | "billing_month"; start: string; end: string };
  /** Counters of the current window, in micros; null for a per-account budget without an account. */
  settled: number | null;
  held: number | null;
  used: number | null;
  remaining: number | null;
};

export type EndpointStatus = {
  endpoint: { key: string; name: string; unit: string; perCallMax: number };
  account: string | null;
  /** The account's plan (the default plan's key when it was never assigned one); null without an account. */
  plan: string | null;
  /** The account is blocked: every endpoint refuses it (gate blocked). */
  blocked: boolean;
  killed: boolean;
  ceilings: CeilingStatus[];
  /** The live budgets the endpoint belongs to: a reservation is refused (gate budget) when any has too little left. */
  budgets: BudgetStatus[];
};

type BudgetRow = {
  id: number;
  key: string;
  name: string;
  currency: string;
  scope: BudgetStatus["scope"];
  window: BudgetStatus["window"]["kind"];
  own_value: string | number;
  bound_value: string | number | null;
  bound_source: BudgetStatus["source"] | null;
  bound_ends: string | Date | null;
  window_start: string | Date;
  window_end: string | Date;
  held: string | number | null;
  settled: string | number | null;
};

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());
/** The live budgets of an endpoint with their current window's money, as enforcement reads them (account_budget_limit). */
async function readBudgets(db: Db, endpointKey: string, account: string | null): Promise<BudgetStatus[]> {
  const rows = resultRows<BudgetRow>(
    await db.execute(sql`
      select b.id, b.key, b.name, b.currency, b.scope, b.window, b.value as own_value,
             l.value as bound_value, l.source as bound_source, l.ends_at as bound_ends, w.window_start, w.window_end, u.held, u.settled
      from endpoints e
      join budget_members m on m.endpoint_id = e.id
      join budgets b on b.id = m.budget_id and b.archived_at is null
      cross join lateral ceilings.window_bounds(b.window, b.billing_day, null, now()) w
      left join lateral ceilings.account_budget_limit(b.id, ${account}::text) l on b.scope = 'account' and ${account}::text is not null
      left join budget_usage u on u.budget_id = b.id and u.window_start = w.window_start
        and u.scope_key = case b.scope when 'global' then '' else ${account}::text end
      where e.key = ${endpointKey}
      order by b.id`),
  );
  return rows.map((r) => {
    const own = Number(r.own_value);
    const value = r.bound_value === null ? own : Number(r.bound_value);
    return {
      budgetId: r.id,
      budget: r.key,
      name: r.name,
      currency: r.currency,
      scope: r.scope,
      value,
      source: r.bound_source ?? (own === 0 ? "kill" : "budget"),
      overrideEndsAt: iso(r.bound_ends),
      killed: own === 0,
      window: { kind: r.window, start: new Date(r.window_start).toISOString(), end: new Date(r.window_end).toISOString() },
      ...counters(r.scope === "global" || account !== null, r.held, r.settled, value),
    };
  });
}

type Row = {
  key: string;
  name: string;
  unit: string;
  per_call_max: string | number;
  ceiling_id: number | null;
  metric: CeilingStatus["metric"] | null;
  scope: CeilingStatus["scope"] | null;
  window: CeilingStatus["window"]["kind"] | null;
  window_seconds: number | null;
  ceiling_value: string | number | null;
  bound_value: string | number | null;
  bound_source: LimitSource | null;
  bound_ends: string | Date | null;
  plan: string | null;
  blocked: boolean | null;
  window_start: string | Date | null;
  window_end: string | Date | null;
  held: string | number | null;
  settled: string | number | null;
};

/** A window's counters against the value in force; all null when the window is not one counter (`counted` false). */
function counters(counted: boolean, held: string | number | null, settled: string | number | null, value: number) {
  if (!counted) return { settled: null, held: null, used: null, remaining: null };
  const h = Number(held ?? 0);
  const s = Number(settled ?? 0);
  return { settled: s, held: h, used: h + s, remaining: Math.max(value - (h + s), 0) };
}

/**
 * An endpoint's ceilings and budgets with the usage of their current windows, computed with the
 * same window function enforcement uses. Per-caller ceilings and per-account budgets report
 * `account`'s own counter and the value that binds it. Null for an unknown endpoint.
 */
export async function readEndpointStatus(db: Db, params: { endpointKey: string; account: string | null }): Promise<EndpointStatus | null> {
  const account = params.account;
  const [ceilingRows, budgets] = await Promise.all([
    db.execute(sql`
      select e.key, e.name, e.unit, e.per_call_max,
             c.id as ceiling_id, c.metric, c.scope, c.window, c.window_seconds, c.value as ceiling_value,
             l.value as bound_value, l.source as bound_source, l.ends_at as bound_ends,
             (select p.key from plans p left join accounts a on a.account = ${account}::text
              where ${account}::text is not null and p.id = coalesce(a.plan_id, (select d.id from plans d where d.is_default))) as plan,
             (select a.blocked_at is not null from accounts a where a.account = ${account}::text) as blocked,
             case when c.window <> 'first_hit' then b.window_start end as window_start,
             case when c.window <> 'first_hit' then b.window_end end as window_end,
             u.held, u.settled
      from endpoints e
      left join ceilings c on c.endpoint_id = e.id
      left join lateral ceilings.window_bounds(c.window, e.billing_day, c.window_seconds, now()) b on c.id is not null
      left join lateral ceilings.caller_limit(c.id, ${account}::text) l on c.scope = 'caller' and ${account}::text is not null
      left join usage u on u.ceiling_id = c.id and c.window <> 'first_hit' and u.window_start = b.window_start
        and u.scope_key = case c.scope when 'global' then '' when 'caller' then ${account}::text end
      where e.key = ${params.endpointKey}
      order by c.id`),
    readBudgets(db, params.endpointKey, account),
  ]);
  const rows = resultRows<Row>(ceilingRows);
  const first = rows[0];
  if (!first) return null;
  const ceilings: CeilingStatus[] = [];
  for (const r of rows) {
    if (r.ceiling_id === null || r.metric === null || r.scope === null || r.window === null || r.ceiling_value === null) continue;
    const ceilingValue = Number(r.ceiling_value);
    // A per-caller ceiling for an account: what enforcement applies (caller_limit); otherwise its own value.
    const source: LimitSource = r.bound_source ?? (ceilingValue === 0 ? "kill" : "ceiling");
    const value = r.bound_value === null ? ceilingValue : Number(r.bound_value);
    ceilings.push({
      ceilingId: r.ceiling_id,
      metric: r.metric,
      scope: r.scope,
      value,
      override: source === "override",
      source,
      overrideEndsAt: iso(r.bound_ends),
      killed: ceilingValue === 0,
      window: { kind: r.window, start: iso(r.window_start), end: iso(r.window_end), seconds: r.window_seconds },
      ...counters(r.scope === "global" || (r.scope === "caller" && account !== null), r.held, r.settled, value),
    });
  }
  return {
    endpoint: { key: first.key, name: first.name, unit: first.unit, perCallMax: Number(first.per_call_max) },
    account,
    plan: first.plan,
    blocked: first.blocked === true,
    // Any ceiling at 0 refuses every call (gate kill_switch), exactly as enforcement decides.
    killed: ceilings.some((c) => c.killed),
    ceilings,
    budgets,
  };
}

/** Whether an endpoint with this key exists: tells 404 from 403 for a key not allowed on it. */
export async function endpointExists(db: Db, endpointKey: string): Promise<boolean> {
  const rows = resultRows<{ one: number }>(await db.execute(sql`select 1 as one from endpoints where key = ${endpointKey}`));
  return rows.length > 0;
}
