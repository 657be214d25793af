import { sql, type SQL } from "drizzle-orm";
import { endpoints, refusalHourly, refusals } from "@/db/schema";
import type { RefusalFilters } from "./filters";
import { filterConditions, whereAll } from "./where";
import { HOUR_MS } from "@/lib/time";

// The chart over long ranges reads refusal_hourly (kept by ceilings.log_refusals), not millions of
// refusal rows. Each refusal counts in the UTC hour of its row's `at`, exactly as the raw chart
// places it, so both give the same numbers.


/**
 * The rollup has no callers or destinations, and a bucket shorter than an hour would split its
 * rows; those charts stay on the raw log.
 */
export function rollupAnswers(filters: RefusalFilters, bucketMs: number): boolean {
  return filters.caller === undefined && !filters.destination && bucketMs >= HOUR_MS && bucketMs % HOUR_MS === 0;
}

const ceilHour = (d: Date) => new Date(Math.ceil(d.getTime() / HOUR_MS) * HOUR_MS);
const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);

/**
 * Per-bucket, per-gate sums over [from, to): whole hours from refusal_hourly, and the partial hours
 * at either end (a range ending now rarely falls on the hour) from the raw log, at most an hour each.
 * `bucket` is the date_bin of the time column against `origin`; hours stay whole in one bucket
 * because buckets are whole hours from an hour-aligned origin.
 */
export function rollupChartQuery(p: { filters: RefusalFilters; from: Date; to: Date; bucketMs: number; origin: Date }): SQL {
  const { filters, from, to } = p;
  const interval = `${p.bucketMs / 1000} seconds`;
  const origin = p.origin.toISOString();
  const wholeFrom = ceilHour(from);
  const wholeTo = floorHour(to);
  const parts: SQL[] = [];
  const raw = (a: Date, b: Date) => {
    if (a.getTime() >= b.getTime()) return;
    const where = whereAll(filterConditions({ ...filters, from: a, to: b }));
    parts.push(sql`
      select date_bin(${interval}::interval, ${refusals.at}, ${origin}::timestamptz) as bucket, ${refusals.gate} as gate, sum(${refusals.count}) as n
      from ${refusals} where ${where} group by 1, 2`);
  };
  if (wholeFrom.getTime() >= wholeTo.getTime()) {
    raw(from, to);
  } else {
    raw(from, wholeFrom);
    const conditions: SQL[] = [sql`${refusalHourly.hour} >= ${wholeFrom.toISOString()}::timestamptz`, sql`${refusalHourly.hour} < ${wholeTo.toISOString()}::timestamptz`];
    if (filters.endpoint) {
      conditions.push(sql`${refusalHourly.endpointId} = (select ${endpoints.id} from ${endpoints} where ${endpoints.key} = ${filters.endpoint})`);
    }
    if (filters.gate) conditions.push(sql`${refusalHourly.gate} = ${filters.gate}`);
    // Summed per hour first: the index hands rows over in (hour, gate) order, so that step is a
    // streaming aggregate, and the bucket aggregate then sees one row per hour and gate.
    parts.push(sql`
      select date_bin(${interval}::interval, h.hour, ${origin}::timestamptz) as bucket, h.gate, sum(h.n) as n
      from (
        select ${refusalHourly.hour} as hour, ${refusalHourly.gate} as gate, sum(${refusalHourly.count}) as n
        from ${refusalHourly} where ${whereAll(conditions)} group by 1, 2
      ) h group by 1, 2`);
    raw(wholeTo, to);
  }
  return sql`select bucket, gate, sum(n)::bigint as n from (${sql.join(parts, sql` union all `)}) u group by 1, 2`;
}
