import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { DEMO_ENDPOINTS } from "./catalog";

// Five weeks of budget history for the demo: each budget's counters, per UTC day, built from the
// history its members' own counters already hold (lib/demo/history.ts), priced the way the
// endpoints bill. A global budget counts its members' global daily units; a per-account budget
// counts their per-caller daily units, account by account. A part-priced endpoint's units are
// split between its parts by the demo's share of output tokens. Only settled money is written:
// today's held reservations were made before the budgets in this story, and charged none.

/** Picos a unit, blended across an endpoint's parts by its demo output share. */
function blendedPrices(parts: Map<string, { name: string; pricePico: number }[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const def of DEMO_ENDPOINTS) {
    const priced = parts.get(def.key) ?? [];
    const price = (name: string) => priced.find((p) => p.name === name)?.pricePico ?? 0;
    const share = def.outputShare;
    out[def.key] = priced.length > 1 && share !== undefined ? (1 - share) * price("input") + share * price("output") : (priced[0]?.pricePico ?? 0);
  }
  return out;
}

export async function seedBudgetHistory(tx: Db): Promise<number> {
  const rows = resultRows<{ key: string; parts: { name: string; pricePico: number }[] }>(await tx.execute(sql`select key, parts from endpoints`));
  const prices = blendedPrices(new Map(rows.map((r) => [r.key, r.parts])));
  const inserted = resultRows<{ n: number }>(
    await tx.execute(sql`
      with price as (
        select key, value::numeric as pico from jsonb_each_text(${JSON.stringify(prices)}::jsonb)
      ), daily as (
        insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
        select b.limit_id, case when b.scope = 'global' then '' else u.scope_key end, u.window_start, u.window_end, 0,
               sum(ceilings.micros_of(u.settled::numeric * p.pico)), sum(u.reservations)
        from budgets b
        join budget_members m on m.budget_id = b.id
        join endpoints e on e.id = m.endpoint_id
        join price p on p.key = e.key
        join ceilings c on c.endpoint_id = e.id and c.metric = 'units' and c."window" = 'utc_day'
                       and c.scope = (case when b.scope = 'global' then 'global' else 'caller' end)::ceiling_scope
        join usage u on u.ceiling_id = c.id
        group by 1, 2, 3, 4
        returning 1
      )
      select count(*)::int as n from daily`),
  );
  // Today's settled reservations on members name the budgets they charged, as reserve_batch writes
  // them: a member's share on the Budgets page counts a reservation for the budgets its charges name.
  await tx.execute(sql`
    update reservations r
    set charges = r.charges || (
      select array_agg(row(b.limit_id, case when b.scope = 'global' then '' else r.caller end,
                           w.window_start, 'm', coalesce(r.money, 0))::reservation_charge order by b.limit_id)
      from budget_members m
      join budgets b on b.id = m.budget_id and b.archived_at is null
      cross join lateral ceilings.window_bounds(b."window", b.billing_day, 0, r.created_at) w
      where m.endpoint_id = r.endpoint_id)
    where r.state = 'settled' and r.endpoint_id in (select m.endpoint_id from budget_members m)`);
  return inserted[0]?.n ?? 0;
}
