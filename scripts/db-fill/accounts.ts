import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { FILL_BUDGET } from "./budgets";

// Accounts and plans at scale for bench:dashboard, in set-based SQL (INSERT ... SELECT
// generate_series): `accounts` accounts named as the history's callers are (acct_ + md5, so the
// callers with reservations and refusals are among them), plus the per-account budget's accounts;
// plans free, pro and enterprise with values on every filled per-caller ceiling and the filled
// per-account budget; a tenth of the accounts assigned to them; a few blocked. Then per-account
// counters in the open window and the 29 days before on the busiest per-caller ceilings, so the
// top-accounts view ranks many accounts, and one busy account with everything the account page
// shows (counters on every per-caller ceiling and the budget, overrides, a key). Re-running adds
// nothing that is there already.

const CALLER = (n: string) => `'acct_' || substr(md5('caller' || (${n})::int), 1, 10)`;
const TODAY = sql`(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')`;

/** The account the bench reads as "a busy account": the history's hottest caller (n = 0). */
export const BUSY_ACCOUNT_SQL = sql.raw(CALLER("0"));

export const FILL_PLANS = ["free", "pro", "enterprise"] as const;

/** Runs an INSERT or UPDATE ... RETURNING 1 and counts its rows in the database, not by shipping a million of them. */
async function counted(db: Db, statement: SQL): Promise<number> {
  const [row] = resultRows<{ n: number | string }>(await db.execute(sql`with changed as (${statement}) select count(*) as n from changed`));
  return Number(row?.n ?? 0);
}

export type AccountsFill = { accounts: number; assigned: number; blocked: number; counters: number };

export async function fillAccounts(db: Db, p: { accounts: number; callerUsage: number }): Promise<AccountsFill> {
  // Registered in key order, the order the primary key and the prefix index keep: pages fill as
  // they are built instead of splitting at random.
  const registered = await counted(
    db,
    sql`
    insert into accounts (account, first_seen_at)
    select a.account, now() - (random() * 400) * interval '1 day'
    from (
      select ${sql.raw(CALLER("n"))} as account from generate_series(0, ${p.accounts - 1}::int) n
      union
      select distinct u.scope_key from budget_usage u join budgets b on b.id = u.budget_id
      where b.key = ${FILL_BUDGET} and u.scope_key <> ''
    ) a
    order by a.account
    on conflict do nothing returning 1`,
  );
  const accounts = registered;

  await db.execute(sql`
    insert into plans (key, name, description)
    values ('free', 'Free', 'Filled: the ceilings'' own values'), ('pro', 'Pro', 'Filled: twice the ceilings'' values'),
           ('enterprise', 'Enterprise', 'Filled: the ceilings'' maximum')
    on conflict (key) do nothing`);
  // Values inside each ceiling's bounds: free its value, pro twice that (up to the maximum),
  // enterprise the maximum. The budget: $100, $2,000, and its maximum.
  await db.execute(sql`
    insert into plan_limit_values (plan_id, limit_id, value)
    select p.id, c.limit_id, case p.key when 'free' then c.value when 'pro' then least(c.max_value, c.value * 2) else c.max_value end
    from plans p cross join ceilings c
    where p.key in ('free', 'pro', 'enterprise') and c.scope = 'caller' and c.id in (select caller_c from fill_ep)
    on conflict do nothing`);
  await db.execute(sql`
    insert into plan_limit_values (plan_id, limit_id, value)
    select p.id, b.limit_id, case p.key when 'free' then least(b.max_value, 100000000) when 'pro' then least(b.max_value, 2000000000) else b.max_value end
    from plans p cross join budgets b
    where p.key in ('free', 'pro', 'enterprise') and b.key = ${FILL_BUDGET}
    on conflict do nothing`);

  // Every tenth account on a plan: 60 % pro, 30 % free, 10 % enterprise.
  const assigned = await counted(
    db,
    sql`
    update accounts a set plan_id = p.id, plan_set_at = now(), plan_set_by = 'db:fill'
    from (
      select ${sql.raw(CALLER("n"))} as account,
        case when (n / 10) % 10 < 6 then 'pro' when (n / 10) % 10 < 9 then 'free' else 'enterprise' end as plan
      from generate_series(0, ${p.accounts - 1}::int, 10) n
    ) s
    join plans p on p.key = s.plan
    where a.account = s.account and a.plan_id is null
    returning 1`,
  );
  const blocked = await counted(
    db,
    sql`
    update accounts a set blocked_at = now() - interval '3 days', blocked_by = 'db:fill', block_reason = 'filled: chargebacks'
    from (select ${sql.raw(CALLER("n"))} as account from generate_series(5, ${p.accounts - 1}::int, 10000) n) s
    where a.account = s.account and a.blocked_at is null
    returning 1`,
  );

  const counters = await fillCallerCounters(db, p);
  await fillBusyAccount(db);
  return { accounts, assigned, blocked, counters };
}

/**
 * Per-account counters on the three busiest per-caller ceilings: `callerUsage` accounts in today's
 * window of the busiest and a fifth as many on the next two, and a tenth as many on each of the 29
 * days before on the busiest. Accounts are drawn spread over the whole id range.
 */
async function fillCallerCounters(db: Db, p: { accounts: number; callerUsage: number }): Promise<number> {
  const spread = (k: string) => `((${k})::bigint * 7919 % ${p.accounts})`;
  const today = await counted(
    db,
    sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.caller_l, ${sql.raw(CALLER(spread("k")))}, ${TODAY}, ${TODAY} + interval '1 day',
      floor(f.caller_value * power(random(), 2))::bigint, 1
    from (select caller_l, caller_value, row_number() over (order by idx) as r from fill_ep where caller_c is not null) f
    cross join lateral generate_series(1, case when f.r = 1 then ${p.callerUsage}::int else ${Math.floor(p.callerUsage / 5)}::int end) k
    where f.r <= 3
    on conflict do nothing returning 1`,
  );
  const history = await counted(
    db,
    sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.caller_l, ${sql.raw(CALLER(spread("k + d * 104729")))}, ${TODAY} - d * interval '1 day', ${TODAY} - (d - 1) * interval '1 day',
      floor(f.caller_value * power(random(), 2))::bigint, 1
    from (select caller_l, caller_value from fill_ep where caller_c is not null order by idx limit 1) f
    cross join generate_series(1, 29) d
    cross join lateral generate_series(1, ${Math.floor(p.callerUsage / 10)}::int) k
    on conflict do nothing returning 1`,
  );
  return today + history;
}

/** The busy account: 30 days of counters on every per-caller ceiling and 90 on the budget, two overrides, a key. */
async function fillBusyAccount(db: Db): Promise<void> {
  await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
    select f.caller_l, ${BUSY_ACCOUNT_SQL}, ${TODAY} - d * interval '1 day', ${TODAY} - (d - 1) * interval '1 day', floor(f.caller_value * random())::bigint, 3
    from fill_ep f cross join generate_series(0, 29) d
    where f.caller_c is not null
    on conflict do nothing`);
  await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
    select b.limit_id, ${BUSY_ACCOUNT_SQL}, ${TODAY} - d * interval '1 day', ${TODAY} - (d - 1) * interval '1 day', 0, 500000 + d, 4
    from budgets b cross join generate_series(0, 89) d
    where b.key = ${FILL_BUDGET}
    on conflict do nothing`);
  await db.execute(sql`
    insert into limit_overrides (limit_id, caller, value, reason)
    select c.limit_id, ${BUSY_ACCOUNT_SQL}, f.caller_value * 2, 'filled: a support ticket raised it'
    from (select caller_c, caller_value from fill_ep where caller_c is not null order by idx limit 2) f
    join ceilings c on c.id = f.caller_c
    on conflict do nothing`);
  await db.execute(sql`
    insert into api_keys (name, prefix, secret_hash, account, endpoint_keys, created_by)
    select 'Filled mobile app', 'ck_fill', md5('fill-key' || ${BUSY_ACCOUNT_SQL}), ${BUSY_ACCOUNT_SQL}, array(select key from fill_ep order by idx limit 5), 'db:fill'
    where not exists (select 1 from api_keys where secret_hash = md5('fill-key' || ${BUSY_ACCOUNT_SQL}))`);
}
