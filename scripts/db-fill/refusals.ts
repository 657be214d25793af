import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { formatCount } from "@/lib/format";

// Refusals are generated raw (one per refused call), folded into 10-second buckets exactly as
// ceilings.log_refusals folds them, and inserted oldest first so the table's physical order
// follows time as it does in production. 25 % more raw calls than rows are drawn, since folding
// merges some; the requested number of rows is then taken at random.

const CALLER = (n: string) => `'acct_' || substr(md5('caller' || (${n})::int), 1, 10)`;
const OVERSAMPLE = 1.3;
const BURSTS = 80;
const BURST_SHARE = 0.25;

// Gate by family, from one uniform draw: the mix each kind of endpoint sees in practice.
const GATE = sql.raw(`case f.family
  when 'email' then case when r.gr < 0.45 then 'ceiling' when r.gr < 0.80 then 'cooldown' when r.gr < 0.88 then 'kill_switch'
                         when r.gr < 0.93 then 'throttle' when r.gr < 0.95 then 'per_call_max' else 'unavailable' end
  when 'sms' then case when r.gr < 0.35 then 'ceiling' when r.gr < 0.60 then 'cooldown' when r.gr < 0.85 then 'throttle'
                       when r.gr < 0.90 then 'per_call_max' when r.gr < 0.95 then 'kill_switch' else 'unavailable' end
  when 'llm' then case when r.gr < 0.55 then 'ceiling' when r.gr < 0.75 then 'per_call_max' when r.gr < 0.90 then 'throttle'
                       when r.gr < 0.94 then 'kill_switch' else 'unavailable' end
  when 'webhook' then case when r.gr < 0.50 then 'ceiling' when r.gr < 0.75 then 'kill_switch' when r.gr < 0.90 then 'throttle' else 'unavailable' end
  else case when r.gr < 0.45 then 'ceiling' when r.gr < 0.65 then 'throttle' when r.gr < 0.80 then 'per_call_max'
            when r.gr < 0.92 then 'kill_switch' else 'unavailable' end
  end::refusal_gate`);

// Inboxes on reserved example domains and numbers in the unassigned 555 area code.
const DESTINATION = sql.raw(`case
  when f.family = 'email' then (array['maria','sam','li.wei','noah','fatima','olga','diego','amara','jonas','priya','tom','ines'])[1 + r.dn % 12]
    || '.' || (r.dn / 12) || '@' || (array['example.com','example.org','example.net','mail.example.com','example.co.uk'])[1 + r.dn % 5]
  when f.family in ('sms', 'voice') then '+1555' || lpad((r.dn % 10000000)::text, 7, '0')
  else '' end`);

async function count(db: Db, table: string): Promise<number> {
  const [row] = resultRows<{ n: number | string }>(await db.execute(sql`select count(*) as n from ${sql.identifier(table)}`));
  return Number(row?.n ?? 0);
}

export async function fillRefusals(db: Db, rows: number, days: number, log: (line: string) => void): Promise<number> {
  const raw = Math.ceil(rows * OVERSAMPLE);
  const burstRaw = Math.round(raw * BURST_SHARE);
  const span = sql`make_interval(days => ${days})`;
  await db.execute(sql`drop table if exists fill_raw, fill_bursts, fill_rows`);
  await db.execute(sql`create temp table fill_raw (ei int, caller text, dn int, gr float8, at timestamptz, cnt int)`);
  await db.execute(sql`
    insert into fill_raw
    select floor(50 * power(random(), 2.5))::int,
      case when random() < 0.08 then '' else ${sql.raw(CALLER("floor(5000 * power(random(), 3))"))} end,
      floor(200000 * power(random(), 2))::int, random(),
      now() - power(random(), 1.3) * ${span}, 1 + floor(power(random(), 12) * 40)::int
    from generate_series(1, ${raw - burstRaw})`);
  await db.execute(sql`
    create temp table fill_bursts as
    select b, floor(50 * power(random(), 1.5))::int as ei, now() - random() * ${span} as t0,
      (10 + random() * 110) * interval '1 minute' as len, random() as gr, 0.05 + power(random(), 2) as weight,
      case when random() < 0.4 then ${sql.raw(CALLER("floor(300 * random())"))} end as caller
    from generate_series(1, ${BURSTS}) b`);
  await db.execute(sql`
    insert into fill_raw
    select b.ei, coalesce(b.caller, ${sql.raw(CALLER("floor(5000 * random())"))}), floor(200000 * random())::int,
      case when random() < 0.85 then b.gr else random() end, least(now(), b.t0 + random() * b.len), 1 + floor(power(random(), 6) * 20)::int
    from fill_bursts b
    cross join lateral generate_series(1, greatest(1, round(${burstRaw} * b.weight / (select sum(weight) from fill_bursts)))::int) i`);
  log(`  drew ${await count(db, "fill_raw")} refused calls`);

  await db.execute(sql`
    create temp table fill_rows as
    select min(r.at) as at, max(r.at) as last_at, to_timestamp(floor(extract(epoch from r.at) / 10) * 10) as bucket,
      r.ei, ${GATE} as gate, r.caller, ${DESTINATION} as destination, sum(r.cnt)::int as cnt, min(r.dn) as dn
    from fill_raw r join fill_ep f on f.idx = r.ei
    group by 3, r.ei, 5, r.caller, 7`);
  await db.execute(sql`drop table fill_raw`);
  const folded = await count(db, "fill_rows");
  log(`  folded into ${folded} rows`);

  await db.execute(sql`
    create temp table fill_final as
    select row_number() over (order by x.at) as seq, x.* from (select * from fill_rows order by random() limit ${rows}) x`);
  await db.execute(sql`drop table fill_rows`);
  const total = await count(db, "fill_final");
  const chunk = 250_000;
  // Into an empty table the folded rows cannot collide, so even the dedupe index can be built
  // afterwards; otherwise it stays and catches collisions with the rows already there.
  const [existing] = resultRows<{ any: boolean }>(await db.execute(sql`select exists (select 1 from refusals) as any`));
  const empty = existing?.any === false;
  const rebuild = await dropSecondaryIndexes(db, empty);
  try {
    await insertChunks(db, total, chunk, empty, log);
  } finally {
    log(`  rebuilding ${rebuild.length} indexes`);
    for (const ddl of rebuild) await db.execute(sql.raw(ddl));
  }
  await db.execute(sql`drop table fill_final`);
  return total;
}

/**
 * Building an index once over sorted rows is several times faster than updating it row by row.
 * The primary key stays, and the dedupe index unless the table is empty; the others are dropped and
 * recreated from their own definitions, read from pg_indexes, so they come back exactly as they were.
 */
async function dropSecondaryIndexes(db: Db, includeUnique: boolean): Promise<string[]> {
  const rows = resultRows<{ name: string; ddl: string }>(
    await db.execute(sql`
      select i.indexname as name, i.indexdef as ddl from pg_indexes i
      join pg_class c on c.relname = i.indexname join pg_index x on x.indexrelid = c.oid
      where i.schemaname = 'public' and i.tablename = 'refusals' and not x.indisprimary
        and (${includeUnique} or not x.indisunique)`),
  );
  for (const r of rows) await db.execute(sql`drop index if exists ${sql.identifier(r.name)}`);
  return rows.map((r) => r.ddl);
}

async function insertChunks(db: Db, total: number, chunk: number, empty: boolean, log: (line: string) => void): Promise<void> {
  for (let from = 1; from <= total; from += chunk) {
    await db.execute(sql`
      insert into refusals (at, last_at, bucket, endpoint_id, endpoint_key, ceiling_id, gate, caller, destination,
                            amount, remaining, count, request_id, detail)
      select r.at, r.last_at, r.bucket, f.id, f.key,
        case r.gate when 'ceiling' then case when f.caller_c is not null and r.dn % 3 = 0 then f.caller_c else f.day_c end
                    when 'cooldown' then f.cool_c when 'kill_switch' then f.day_c end,
        r.gate, r.caller, r.destination, a.n,
        case r.gate when 'ceiling' then floor(a.n * (r.dn % 97) / 97.0)::bigint when 'cooldown' then 0 when 'kill_switch' then 0 end,
        r.cnt, 'req_' || substr(md5(r.seq::text || r.at::text), 1, 16),
        case r.gate
          when 'ceiling' then 'at most ' || f.day_value || ' ' || f.unit || ' per UTC day: the day''s budget is spent'
          when 'cooldown' then 'one per destination per cooldown window'
          when 'kill_switch' then f.key || ' is killed: every ceiling is at 0'
          when 'per_call_max' then 'asked for ' || a.n || ' ' || f.unit || '; one call may take at most ' || f.per_call_max
          when 'throttle' then 'more than 60 requests per minute from this account'
          else 'the database did not answer within 2000 ms: refused, failing closed' end
      from fill_final r join fill_ep f on f.idx = r.ei
      cross join lateral (select case
        when r.gate = 'per_call_max' then f.per_call_max * (2 + r.dn % 4)
        when f.per_call_max = 1 then 1
        else greatest(1, (f.per_call_max * ((r.dn % 16) + 1)) / 16) end::bigint as n) a
      where r.seq between ${from} and ${Math.min(total, from + chunk - 1)}
      order by r.seq
      ${empty ? sql`` : sql`on conflict do nothing`}`);
    log(`  inserted refusals ${formatCount(Math.min(total, from + chunk - 1))} / ${formatCount(total)}`);
  }
}
