import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { buildWhatIfDays } from "@/lib/changes/what-if-days";
import { DEFAULT_PART } from "@/lib/vocabulary";

// The what-if bench's endpoint: `n` reservations over the last 30 days on one LLM-like endpoint
// (llm.whatif-bench), from 2,000 accounts of uneven weight, every state, with a global and a
// per-caller ceiling by UTC day. Made once: re-running with the endpoint present adds nothing.
export const WHAT_IF_ENDPOINT = "llm.whatif-bench";

export async function fillWhatIf(db: Db, n: number): Promise<number> {
  const [inserted] = resultRows<{ id: number }>(
    await db.execute(sql`
    insert into endpoints (key, name, unit, parts, per_call_max)
    values (${WHAT_IF_ENDPOINT}, 'What-if bench', 'tokens', ${JSON.stringify([{ name: DEFAULT_PART, pricePico: 2_500_000 }])}::jsonb, 8000)
    on conflict (key) do nothing returning id`),
  );
  if (!inserted) return 0;
  const id = inserted.id;
  await db.execute(sql`
    insert into ceilings (endpoint_id, metric, scope, "window", value, min_value, max_value, default_value)
    values (${id}, 'units', 'global', 'utc_day', 200000000, 0, 400000000, 200000000),
           (${id}, 'units', 'caller', 'utc_day', 2000000, 0, 8000000, 2000000)`);
  // Amounts 1..8000 tokens (mean ~2,000); 80% settled below the reservation, 5% released, the
  // rest expired (held if still within its 5 minutes, as the sweeper would leave them). Accounts
  // squared-skewed: a few heavy ones, a long tail.
  await db.execute(sql`
    insert into reservations (endpoint_id, caller, amount, money, state, settled_amount, settled_money, charges, created_at, expires_at)
    select ${id}, 'acct-' || lpad((floor(power(random(), 2) * 2000))::int::text, 4, '0'), a, ceil(a * 2.5)::bigint, st,
           case when st = 'settled' then s end, case when st = 'settled' then ceil(s * 2.5)::bigint end,
           '{}', at, at + interval '5 minutes'
    from (select 1 + floor(power(random(), 3) * 8000)::bigint as a, random() as p,
                 now() - random() * interval '30 days' as at
          from generate_series(1, ${n}) order by 3) g
    cross join lateral (select case when g.p < 0.8 then 'settled' when g.p < 0.85 then 'released'
                                    when g.p < 0.9 or g.at < now() - interval '5 minutes' then 'expired' else 'held' end::reservation_state as st,
                               floor(g.a * (0.5 + random() * 0.5))::bigint as s) x`);
  // The usage counters reserve and resolve keep (held + settled: what each grant finally charged),
  // as if the ceilings had counted the whole month: whatIf skips the days they show cannot refuse.
  await db.execute(sql`update ceilings set created_at = now() - interval '60 days' where endpoint_id = ${id}`);
  await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
    select c.limit_id, case c.scope when 'global' then '' else r.caller end, x.d, x.d + interval '1 day',
           sum(case when r.state = 'held' then r.amount else 0 end),
           sum(case r.state when 'settled' then r.settled_amount when 'expired' then r.amount else 0 end), count(*)
    from reservations r
    cross join lateral (select date_trunc('day', r.created_at at time zone 'UTC') at time zone 'UTC' as d) x
    join ceilings c on c.endpoint_id = r.endpoint_id
    where r.endpoint_id = ${id}
    group by c.limit_id, 2, x.d`);
  await db.execute(sql`vacuum analyze reservations`);
  await db.execute(sql`analyze counters`);
  // What the worker's what-if-days job would have written by now: every closed day.
  await buildWhatIfDays(db, new Date(), { endpointIds: [id], maxGrants: Infinity });
  return n;
}
