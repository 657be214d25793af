import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { forgetLedgerDays } from "@/lib/changes/what-if-days";
import { FILL_ENDPOINTS } from "./catalog";

// History in bulk SQL (INSERT ... SELECT generate_series), so millions of rows take minutes, not
// hours. Skew: endpoint i gets traffic ~ (1 - i/50)^1.5, caller n ~ n^-2/3 (a few accounts are
// much hotter), refusals grow toward today, and 80 bursts (attacks, floods, outages) add a quarter
// of the rows within minutes each. All runs on one connection: the temp tables are per session.

const CALLER = (n: string) => `'acct_' || substr(md5('caller' || (${n})::int), 1, 10)`;

export async function prepareFillEndpoints(db: Db): Promise<number> {
  await db.execute(sql`drop table if exists fill_ep`);
  await db.execute(sql`
    create temp table fill_ep as
    select (row_number() over (order by md5(e.key)) - 1)::int as idx, e.id, e.key, split_part(e.key, '.', 1) as family, e.unit,
      (select c.id from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'utc_day' order by c.id limit 1) as day_c,
      (select c.limit_id from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'utc_day' order by c.id limit 1) as day_l,
      (select c.value from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'utc_day' order by c.id limit 1) as day_value,
      (select c.id from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'billing_month' order by c.id limit 1) as month_c,
      (select c.limit_id from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'billing_month' order by c.id limit 1) as month_l,
      (select c.value from ceilings c where c.endpoint_id = e.id and c.scope = 'global' and c."window" = 'billing_month' order by c.id limit 1) as month_value,
      (select c.id from ceilings c where c.endpoint_id = e.id and c.scope = 'caller' order by c.id limit 1) as caller_c,
      (select c.limit_id from ceilings c where c.endpoint_id = e.id and c.scope = 'caller' order by c.id limit 1) as caller_l,
      (select c.value from ceilings c where c.endpoint_id = e.id and c.scope = 'caller' order by c.id limit 1) as caller_value,
      (select c.id from ceilings c where c.endpoint_id = e.id and c.scope = 'destination' order by c.id limit 1) as cool_c,
      e.per_call_max
    from endpoints e where e.key in ${sql.raw(`(${FILL_ENDPOINTS.map((e) => `'${e.key}'`).join(",")})`)}`);
  const [row] = resultRows<{ n: number | string }>(await db.execute(sql`select count(*) as n from fill_ep`));
  return Number(row?.n ?? 0);
}

/** Daily and monthly global counters for every day, and per-account counters of the top accounts. */
export async function fillUsage(db: Db, days: number): Promise<number> {
  const start = sql`(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') - make_interval(days => ${days - 1})`;
  const daily = await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.day_l, '', d, d + interval '1 day', s, greatest(1, s / greatest(1, f.per_call_max / 4))
    from fill_ep f
    cross join generate_series(${start}, now(), interval '1 day') d
    cross join lateral (select least(f.day_value, floor(f.day_value * (0.15 + 0.9 * random()) * (1.2 - f.idx / 60.0)))::bigint as s) x
    on conflict do nothing returning 1`);
  const monthly = await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.month_l, '', m, m + interval '1 month', s, greatest(1, s / greatest(1, f.per_call_max / 4))
    from fill_ep f
    cross join generate_series(date_trunc('month', ${start}), now(), interval '1 month') m
    cross join lateral (select floor(f.month_value * (0.3 + 0.65 * random()))::bigint as s) x
    where f.month_c is not null
    on conflict do nothing returning 1`);
  const perCaller = await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.caller_l, ${sql.raw(CALLER("n"))}, d, d + interval '1 day', s, greatest(1, s / greatest(1, f.per_call_max / 4))
    from fill_ep f
    cross join generate_series(1, 20) n
    cross join generate_series(${start}, now(), interval '1 day') d
    cross join lateral (select floor(f.caller_value * random())::bigint as s) x
    where f.caller_c is not null and random() < 0.5
    on conflict do nothing returning 1`);
  return resultRows(daily).length + resultRows(monthly).length + resultRows(perCaller).length;
}

/** Resolved reservations across the history (settled mostly, some released, a few expired). */
export async function fillReservations(db: Db, count: number, days: number): Promise<void> {
  await db.execute(sql`
    insert into reservations (endpoint_id, caller, amount, settled_amount, state, charges, created_at, expires_at, resolved_at)
    select f.id, g.caller, am.n,
      case when g.r < 0.9 then greatest(1, floor(am.n * (0.3 + 0.7 * g.a)))::bigint when g.r < 0.98 then null else am.n end,
      (case when g.r < 0.9 then 'settled' when g.r < 0.98 then 'released' else 'expired' end)::reservation_state,
      array[row(f.day_l, '', date_trunc('day', g.t at time zone 'UTC') at time zone 'UTC', 'u', am.n)::reservation_charge],
      g.t, g.t + interval '5 minutes', g.t + case when g.r < 0.98 then g.a * interval '30 seconds' else interval '5 minutes' end
    from (
      select floor(50 * power(random(), 2.5))::int as ei, now() - power(random(), 1.3) * make_interval(days => ${days}) - interval '1 hour' as t,
        ${sql.raw(CALLER("floor(5000 * power(random(), 3))"))} as caller, random() as r, random() as a
      from generate_series(1, ${count})
    ) g
    join fill_ep f on f.idx = g.ei
    cross join lateral (select case when f.per_call_max = 1 then 1::bigint else greatest(1, floor(g.a * f.per_call_max))::bigint end as n) am`);
  // History made after the what-if's ledger was written: it is written again (the worker's job).
  await forgetLedgerDays(
    db,
    resultRows<{ id: number }>(await db.execute(sql`select id from fill_ep`)).map((r) => r.id),
  );
}
