import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { whatIf } from "@/lib/changes/what-if";
import { formatCount } from "@/lib/format";
import { WHAT_IF_ENDPOINT } from "../db-fill/what-if";

// The what-if read over 30 days of the bench endpoint (npm run db:fill -- --what-if 1000000):
// a value no day reaches (every closed day skipped from its usage row), one just under the
// busiest days (those few replayed) and one most days cross (every day replayed). Target 200 ms.
export async function whatIfCases(db: Db, now: Date): Promise<{ label: string; target: number; run: () => Promise<unknown> }[]> {
  const [c] = resultRows<{ id: number; n: string; busiest: string; median: string }>(
    await db.execute(sql`
      select c.id, (select count(*) from reservations r where r.endpoint_id = e.id and r.created_at >= ${now.toISOString()}::timestamptz - interval '30 days')::text as n,
             max(u.held + u.settled)::text as busiest,
             (percentile_cont(0.5) within group (order by u.held + u.settled))::bigint::text as median
      from endpoints e join ceilings c on c.endpoint_id = e.id and c.scope = 'global' and c.window = 'utc_day'
      join usage u on u.ceiling_id = c.id
      where e.key = ${WHAT_IF_ENDPOINT} group by c.id, e.id`),
  );
  if (!c) return [];
  const n = formatCount(Number(c.n));
  const busiest = Number(c.busiest);
  const median = Number(c.median);
  const run = (value: number) => () => whatIf(db, { ceilingId: c.id, value, days: 30, now });
  return [
    { label: `what-if: 30 days of ${n}, no day reaches the value`, target: 200, run: run(busiest + 10_000) },
    { label: `what-if: 30 days of ${n}, the busiest days cross`, target: 200, run: run(Math.round(busiest * 0.995)) },
    { label: `what-if: 30 days of ${n}, every day crosses`, target: 200, run: run(Math.round(median * 0.6)) },
  ];
}
