import { sql, type SQL } from "drizzle-orm";
import { endpoints, refusalDaily, refusalHourly, refusals } from "@/db/schema";
import type { RefusalFilters } from "./filters";
import { filterConditions, whereAll } from "./where";
import { DAY_MS, HOUR_MS } from "@/lib/time";

// The chart over long ranges reads refusal_daily and refusal_hourly (kept by ceilings.log_refusals),
// not millions of refusal rows. Each refusal counts in the UTC day and hour of its row's `at`,
// exactly as the raw chart places it, so all three give the same numbers.

/**
 * The rollup has no callers or destinations, and a bucket shorter than an hour would split its
 * rows; those charts stay on the raw log.
 */
export function rollupAnswers(filters: RefusalFilters, bucketMs: number): boolean {
  return filters.caller === undefined && !filters.destination && bucketMs >= HOUR_MS && bucketMs % HOUR_MS === 0;
}

const ceilTo = (d: Date, unit: number) => new Date(Math.ceil(d.getTime() / unit) * unit);
const floorTo = (d: Date, unit: number) => new Date(Math.floor(d.getTime() / unit) * unit);

/** A rollup table: its time, endpoint, gate and count columns, and how long one of its rows spans. */
type Level = { table: typeof refusalHourly | typeof refusalDaily; time: SQL; endpointId: SQL; gate: SQL; count: SQL; unitMs: number };
const HOURLY: Level = {
  table: refusalHourly,
  time: sql`${refusalHourly.hour}`,
  endpointId: sql`${refusalHourly.endpointId}`,
  gate: sql`${refusalHourly.gate}`,
  count: sql`${refusalHourly.count}`,
  unitMs: HOUR_MS,
};
const DAILY: Level = {
  table: refusalDaily,
  time: sql`${refusalDaily.day}`,
  endpointId: sql`${refusalDaily.endpointId}`,
  gate: sql`${refusalDaily.gate}`,
  count: sql`${refusalDaily.count}`,
  unitMs: DAY_MS,
};

/**
 * Per-bucket, per-gate sums over [from, to): whole UTC days from refusal_daily when the bars are
 * whole days, whole hours from refusal_hourly, and the partial hours at either end (a range
 * ending now rarely falls on the hour) from the raw log, at most an hour each. `bucket` is the
 * date_bin of the time column against `origin`; days and hours stay whole in one bucket because
 * buckets are whole days (or hours) from a day- (or hour-) aligned origin.
 */
export function rollupChartQuery(p: { filters: RefusalFilters; from: Date; to: Date; bucketMs: number; origin: Date }): SQL {
  const { filters } = p;
  const interval = `${p.bucketMs / 1000} seconds`;
  const origin = p.origin.toISOString();
  // Coarsest first: each level takes the whole units inside its range and hands the edges down.
  const levels = [...(p.bucketMs % DAY_MS === 0 ? [DAILY] : []), HOURLY];
  const parts: SQL[] = [];
  const raw = (a: Date, b: Date) => {
    if (a.getTime() >= b.getTime()) return;
    const where = whereAll(filterConditions({ ...filters, from: a, to: b }));
    parts.push(sql`
      select date_bin(${interval}::interval, ${refusals.at}, ${origin}::timestamptz) as bucket, ${refusals.gate} as gate, sum(${refusals.count}) as n
      from ${refusals} where ${where} group by 1, 2`);
  };
  const rolled = (level: Level, a: Date, b: Date) => {
    const conditions: SQL[] = [sql`${level.time} >= ${a.toISOString()}::timestamptz`, sql`${level.time} < ${b.toISOString()}::timestamptz`];
    if (filters.endpoint) {
      conditions.push(sql`${level.endpointId} = (select ${endpoints.id} from ${endpoints} where ${endpoints.key} = ${filters.endpoint})`);
    }
    if (filters.gate) conditions.push(sql`${level.gate} = ${filters.gate}`);
    // Summed per unit first: the index hands rows over in (time, gate) order, so that step is a
    // streaming aggregate, and the bucket aggregate then sees one row per unit and gate.
    parts.push(sql`
      select date_bin(${interval}::interval, r.t, ${origin}::timestamptz) as bucket, r.gate, sum(r.n) as n
      from (
        select ${level.time} as t, ${level.gate} as gate, sum(${level.count}) as n
        from ${level.table} where ${whereAll(conditions)} group by 1, 2
      ) r group by 1, 2`);
  };
  const cover = (at: number, a: Date, b: Date): void => {
    const level = levels[at];
    if (!level) return raw(a, b);
    const wholeFrom = ceilTo(a, level.unitMs);
    const wholeTo = floorTo(b, level.unitMs);
    if (wholeFrom.getTime() >= wholeTo.getTime()) return cover(at + 1, a, b);
    cover(at + 1, a, wholeFrom);
    rolled(level, wholeFrom, wholeTo);
    cover(at + 1, wholeTo, b);
  };
  cover(0, p.from, p.to);
  return sql`select bucket, gate, sum(n)::bigint as n from (${sql.join(parts, sql` union all `)}) u group by 1, 2`;
}
