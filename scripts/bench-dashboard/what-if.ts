import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { whatIf } from "@/lib/changes/what-if";
import { forgetWrittenDays } from "@/lib/changes/what-if-days";
import { formatCount } from "@/lib/format";
import { WHAT_IF_ENDPOINT } from "../db-fill/what-if";

// The what-if read over 30 days of the bench endpoint (npm run db:fill -- --what-if 1000000):
// a value no day reaches (every closed day skipped from its usage row), one just under the
// busiest days and one most days cross, each with nothing decoded yet (cold) and again (warm).
// Target 200 ms.
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
  // Cold: the process has decoded no written day (a server just started, or another endpoint's
  // month pushed this one out); warm: the next value typed into the panel.
  const run = (value: number, cold: boolean) => () => {
    if (cold) forgetWrittenDays();
    return whatIf(db, { ceilingId: c.id, value, days: 30, now });
  };
  const values: [string, number][] = [
    ["no day reaches the value", busiest + 10_000],
    ["the busiest days cross", Math.round(busiest * 0.995)],
    ["every day crosses", Math.round(median * 0.6)],
  ];
  return [true, false].flatMap((cold) =>
    values.map(([what, value]) => ({ label: `what-if: 30 days of ${n}, ${what}${cold ? ", cold" : ""}`, target: 200, run: run(value, cold) })),
  );
}
