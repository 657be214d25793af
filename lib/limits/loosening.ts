import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

// "Looser" is the database's to say (db/functions/plan_loosening.sql): every limit a plan move
// raises for one account (its override first) or for the plan's accounts (the default switch),
// compared as the worst case one account can spend in a window, in the limit's measure. These two
// calls are the only readers; nothing here re-derives it.

/** One limit a move raises: a per-caller ceiling (units) or a per-account budget (micros). */
export type Loosening = {
  limitKind: "ceiling" | "budget";
  limitId: number;
  measure: "units" | "micros";
  before: number;
  after: number;
  worstBefore: number;
  worstAfter: number;
};

type Row = {
  limit_kind: string;
  limit_id: number;
  measure: string;
  before_value: string | number;
  after_value: string | number;
  worst_before: string | number;
  worst_after: string | number;
};

const toLoosening = (r: Row): Loosening => ({
  limitKind: r.limit_kind === "budget" ? "budget" : "ceiling",
  limitId: Number(r.limit_id),
  measure: r.measure === "micros" ? "micros" : "units",
  before: Number(r.before_value),
  after: Number(r.after_value),
  worstBefore: Number(r.worst_before),
  worstAfter: Number(r.worst_after),
});

/** The limits moving from one plan to another raises (null: the default plan); with `account`, its overrides first. */
export async function planLoosening(db: Db, p: { fromPlanId: number | null; toPlanId: number | null; account?: string }): Promise<Loosening[]> {
  const rows = resultRows<Row>(
    await db.execute(sql`select * from ceilings.plan_loosening(${p.fromPlanId}::int, ${p.toPlanId}::int, ${p.account ?? null}::text)`),
  );
  return rows.map(toLoosening);
}

/**
 * For each account moved to a plan, the limits the move raises (accounts a move loosens nothing
 * for are absent). An account Ceilings has not seen, or never assigned a plan, is on the default.
 */
export async function accountsLoosening(db: Db, rows: readonly { account: string; planId: number }[]): Promise<Map<string, Loosening[]>> {
  const out = new Map<string, Loosening[]>();
  if (rows.length === 0) return out;
  const input = JSON.stringify(rows.map((r) => ({ account: r.account, plan_id: r.planId })));
  const found = resultRows<Row & { account: string }>(
    await db.execute(sql`
      select r.account, l.*
        from jsonb_to_recordset(${input}::jsonb) as r(account text, plan_id integer)
        left join accounts a on a.account = r.account
        cross join lateral ceilings.plan_loosening(a.plan_id, r.plan_id, r.account) l
       where coalesce(a.plan_id, (select d.id from plans d where d.is_default)) is distinct from r.plan_id
       order by r.account, l.limit_kind, l.limit_id`),
  );
  for (const r of found) {
    const list = out.get(r.account) ?? [];
    list.push(toLoosening(r));
    out.set(r.account, list);
  }
  return out;
}

/**
 * What binds one account on a per-caller ceiling or a per-account budget from its plan, before its
 * override (ceilings.plan_limit): an override above what binds the account is a raise, and so is
 * removing one below this. Null: no such per-caller limit.
 */
export async function planLimit(db: Db, p: { kind: "ceiling" | "budget"; limitId: number; account: string }): Promise<number | null> {
  const [row] = resultRows<{ v: string | number | null }>(
    await db.execute(sql`select ceilings.plan_limit(${p.kind}, ${p.limitId}::int, ${p.account}::text) as v`),
  );
  return row?.v === null || row?.v === undefined ? null : Number(row.v);
}
