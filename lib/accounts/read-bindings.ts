import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import type { WindowSpan } from "@/lib/limits/windows";
import { Int, microsOf, NullableInt, parseRows, pricedByParts, unitPricePico } from "@/lib/spend/source";
import { BUDGET_WINDOWS, CEILING_METRICS, CEILING_WINDOWS, type BudgetWindow, type CeilingMetric, type CeilingWindow } from "@/lib/vocabulary";
import { LimitSourceColumn, type Binding } from "./read-binding";

// What binds one account on every per-caller ceiling and every per-account budget (as
// ceilings.caller_limit and account_budget_limit answer, the rule enforcement applies), with the
// layers under it (own value, plan value, override) and its spend in the open window and over the
// last 30 days.
//
// Spend comes from the counters, not from reservations: a per-caller ceiling keeps one usage row
// per account and window (scope_key = the account), a per-account budget one budget_usage row, and
// both keep closed windows as history. Each figure is one primary-key probe (the open window) or
// one primary-key range of at most ~31 rows (30 days), however many reservations the account
// made; summing its reservations would read every one of them, on a table with no index on the
// caller. The cost: an endpoint without a per-caller ceiling, or outside every per-account
// budget, keeps no per-account counter, so its spend is not here (its reservations are listed).

export type AccountOverride = { value: number; reason: string; updatedAt: Date };

type Common = {
  /** The ceiling's (budget's) own value; 0 while killed. */
  own: number;
  /** The value of the account's plan, if its plan sets one. */
  planValue: number | null;
  override: AccountOverride | null;
  binding: Binding;
  span: WindowSpan;
  held: number;
  settled: number;
  /** held + settled in the open window. */
  used: number;
  /** What the account may still reserve in the open window (0 when over). */
  remaining: number;
  /** held + settled in the windows overlapping the last 30 days (`windows` of them). */
  last30: { spend: number; windows: number };
};

export type CeilingBinding = Common & {
  ceilingId: number;
  endpointId: number;
  endpointKey: string;
  endpointName: string;
  endpointArchived: boolean;
  unit: string;
  currency: string;
  metric: CeilingMetric;
  window: CeilingWindow;
  /**
   * The 30 days' units at the endpoint's unit price, in micros (units ceilings only); for an
   * endpoint of several priced parts at its dearest part, so at most what was spent (`upperBound`).
   */
  money30: number | null;
  upperBound: boolean;
};

export type BudgetBinding = Common & {
  budgetId: number;
  key: string;
  name: string;
  currency: string;
  window: BudgetWindow;
  /** An archived budget charges and refuses nothing: shown, but it binds nothing. */
  archived: boolean;
};

type Params = { account: string; now: Date; since: Date };

const Time = z.coerce.date();
// Sums of counters can pass 2^53 (overruns are charged in full): read as the nearest double.
const Sum = z.coerce.number();

const Shared = {
  value: Int,
  limit_value: Int,
  limit_source: LimitSourceColumn,
  plan_value: NullableInt,
  override_value: NullableInt,
  override_reason: z.string().nullable(),
  override_at: Time.nullable(),
  window_start: Time,
  window_end: Time,
  held: Sum,
  settled: Sum,
  spend30: Sum,
  windows30: Int,
};

/** The account's plan: the one assigned, else whichever plan is the default now. */
function planOf(account: string): SQL {
  return sql`(select coalesce((select a.plan_id from accounts a where a.account = ${account}), (select d.id from plans d where d.is_default)) as plan_id)`;
}

/** The windows of counter alias `x` (keyed by `key`) overlapping [since, now]: the start bound keeps it one primary-key range. */
function last30(table: SQL, key: SQL, p: Params): SQL {
  return sql`(
    select sum(x.held + x.settled)::numeric as spend, count(*) as windows
    from ${table} x
    where ${key} and x.scope_key = ${p.account}
      and x.window_start > ${p.since.toISOString()}::timestamptz - interval '32 days'
      and x.window_start <= ${p.now.toISOString()}::timestamptz and x.window_end > ${p.since.toISOString()}::timestamptz
  )`;
}

type SharedRow = z.infer<z.ZodObject<typeof Shared>>;

function common(r: SharedRow): Common {
  const override = r.override_value !== null ? { value: r.override_value, reason: r.override_reason ?? "", updatedAt: r.override_at ?? new Date(0) } : null;
  const binding: Binding = { value: r.limit_value, source: r.limit_source };
  const used = r.held + r.settled;
  return {
    own: r.value,
    planValue: r.plan_value,
    override,
    binding,
    span: { start: r.window_start, end: r.window_end },
    held: r.held,
    settled: r.settled,
    used,
    remaining: Math.max(0, binding.value - used),
    last30: { spend: r.spend30, windows: r.windows30 },
  };
}

const CeilingRow = z.object({
  ...Shared,
  ceiling_id: Int,
  endpoint_id: Int,
  endpoint_key: z.string(),
  endpoint_name: z.string(),
  endpoint_archived: z.boolean(),
  unit: z.string(),
  currency: z.string(),
  metric: z.enum(CEILING_METRICS),
  window: z.enum(CEILING_WINDOWS),
  money30: Sum.nullable(),
  upper_bound: z.boolean(),
});

export async function readCeilingBindings(db: Db, p: Params): Promise<CeilingBinding[]> {
  const now = sql`${p.now.toISOString()}::timestamptz`;
  const rows = parseRows(
    "account ceilings",
    CeilingRow,
    await db.execute(sql`
      select c.id as ceiling_id, e.id as endpoint_id, e.key as endpoint_key, e.name as endpoint_name,
        e.archived_at is not null as endpoint_archived, e.unit, e.currency, c.metric::text as metric, c."window"::text as "window",
        c.value,
        l.value as limit_value, l.source as limit_source,
        v.value as plan_value, o.value as override_value, o.reason as override_reason, o.updated_at as override_at,
        w.window_start, w.window_end, coalesce(u.held, 0) as held, coalesce(u.settled, 0) as settled,
        coalesce(h.spend, 0) as spend30, h.windows as windows30,
        case when c.metric = 'units' then ${microsOf(sql`coalesce(h.spend, 0)`, unitPricePico(sql`e`))} end as money30,
        ${pricedByParts(sql`e`)} as upper_bound
      from ceilings c
      join endpoints e on e.id = c.endpoint_id
      cross join ${planOf(p.account)} pl
      cross join lateral ceilings.window_bounds(c."window", e.billing_day, c.window_seconds, ${now}) w
      left join plan_limit_values v on v.plan_id = pl.plan_id and v.limit_id = c.limit_id
      left join limit_overrides o on o.limit_id = c.limit_id and o.caller = ${p.account} and (o.expires_at is null or o.expires_at > now())
      left join usage u on u.ceiling_id = c.id and u.scope_key = ${p.account} and u.window_start = w.window_start
      cross join lateral ${last30(sql`usage`, sql`x.ceiling_id = c.id`, p)} h
      cross join lateral ceilings.caller_limit(c.id, ${p.account}::text) l
      where c.scope = 'caller'
      order by e.key, c.id`),
  );
  return rows.map((r) => ({
    ...common(r),
    ceilingId: r.ceiling_id,
    endpointId: r.endpoint_id,
    endpointKey: r.endpoint_key,
    endpointName: r.endpoint_name,
    endpointArchived: r.endpoint_archived,
    unit: r.unit,
    currency: r.currency,
    metric: r.metric,
    window: r.window,
    money30: r.money30,
    upperBound: r.upper_bound,
  }));
}

const BudgetRow = z.object({
  ...Shared,
  budget_id: Int,
  key: z.string(),
  name: z.string(),
  currency: z.string(),
  window: z.enum(BUDGET_WINDOWS),
  archived: z.boolean(),
});

export async function readBudgetBindings(db: Db, p: Params): Promise<BudgetBinding[]> {
  const rows = parseRows(
    "account budgets",
    BudgetRow,
    await db.execute(sql`
      select b.id as budget_id, b.key, b.name, b.currency, b."window"::text as "window", b.archived_at is not null as archived,
        b.value, l.value as limit_value, l.source as limit_source, v.value as plan_value, o.value as override_value, o.reason as override_reason, o.updated_at as override_at,
        w.window_start, w.window_end, coalesce(u.held, 0) as held, coalesce(u.settled, 0) as settled,
        coalesce(h.spend, 0) as spend30, h.windows as windows30
      from budgets b
      cross join ${planOf(p.account)} pl
      cross join lateral ceilings.window_bounds(b."window", b.billing_day, 0, ${p.now.toISOString()}::timestamptz) w
      left join plan_limit_values v on v.plan_id = pl.plan_id and v.limit_id = b.limit_id
      left join limit_overrides o on o.limit_id = b.limit_id and o.caller = ${p.account} and (o.expires_at is null or o.expires_at > now())
      left join budget_usage u on u.budget_id = b.id and u.scope_key = ${p.account} and u.window_start = w.window_start
      cross join lateral ${last30(sql`budget_usage`, sql`x.budget_id = b.id`, p)} h
      cross join lateral ceilings.account_budget_limit(b.id, ${p.account}::text) l
      where b.scope = 'account'
      order by b.archived_at is not null, b.key`),
  );
  return rows.map((r) => ({
    ...common(r),
    budgetId: r.budget_id,
    key: r.key,
    name: r.name,
    currency: r.currency,
    window: r.window,
    archived: r.archived,
  }));
}
