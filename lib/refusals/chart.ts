import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { resultRows } from "@/db/client";
import { refusals } from "@/db/schema";
import type { Gate } from "@/lib/vocabulary";
import type { RefusalFilters } from "./filters";
import { rollupAnswers, rollupChartQuery } from "./rollup";
import { filterConditions, whereAll } from "./where";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "@/lib/time";

/** Without a time filter the chart shows the last week: the log itself may span a year. */
export const DEFAULT_CHART_RANGE_MS = 7 * DAY_MS;
const BUCKET_SIZES = [5 * MINUTE_MS, 15 * MINUTE_MS, HOUR_MS, 3 * HOUR_MS, 6 * HOUR_MS, 12 * HOUR_MS, DAY_MS, 7 * DAY_MS, 30 * DAY_MS];
const MAX_BUCKETS = 120;

export type GateCounts = Record<Gate, number>;
export type GateBucket = { start: string } & GateCounts;
/** `source: "raw"` skips the hourly rollup (tests and the benchmark compare the two). */
export type ChartParams = { filters: RefusalFilters; now?: Date; source?: "auto" | "raw" };
export type GateChart = { from: Date; to: Date; bucketMs: number; buckets: GateBucket[]; totals: GateCounts };

/** The smallest bucket that keeps the chart at no more than MAX_BUCKETS bars. */
export function chooseBucketMs(rangeMs: number): number {
  for (const size of BUCKET_SIZES) if (rangeMs / size <= MAX_BUCKETS) return size;
  return BUCKET_SIZES[BUCKET_SIZES.length - 1] ?? DAY_MS;
}

export function chartRange(f: RefusalFilters, now: Date): { from: Date; to: Date } {
  const to = f.to ?? now;
  const from = f.from ?? new Date(to.getTime() - DEFAULT_CHART_RANGE_MS);
  return { from, to };
}

function emptyCounts(): GateCounts {
  return { kill_switch: 0, per_call_max: 0, ceiling: 0, cooldown: 0, throttle: 0, unavailable: 0, budget: 0, blocked: 0 };
}

/**
 * The chart's aggregate query and the buckets it fills, unexecuted (the benchmark explains it).
 * Hour-or-longer buckets filtered by nothing but endpoint, gate and time read the hourly rollup
 * (lib/refusals/rollup.ts); anything else reads the refusal rows.
 */
export function gateChartQuery(params: ChartParams) {
  const { from, to } = chartRange(params.filters, params.now ?? new Date());
  const bucketMs = chooseBucketMs(to.getTime() - from.getTime());
  const origin = new Date(Math.floor(from.getTime() / bucketMs) * bucketMs);
  if (params.source !== "raw" && rollupAnswers(params.filters, bucketMs)) {
    return { query: rollupChartQuery({ filters: params.filters, from, to, bucketMs, origin }), from, to, bucketMs, origin, source: "rollup" as const };
  }
  return { query: rawChartQuery({ filters: params.filters, from, to, bucketMs, origin }), from, to, bucketMs, origin, source: "raw" as const };
}

/** The chart from the refusal rows themselves: any filter, any bucket. */
export function rawChartQuery(p: { filters: RefusalFilters; from: Date; to: Date; bucketMs: number; origin: Date }) {
  const conditions = filterConditions({ ...p.filters, from: p.from, to: p.to });
  const bucket = sql`date_bin(${`${p.bucketMs / 1000} seconds`}::interval, ${refusals.at}, ${p.origin.toISOString()}::timestamptz)`;
  return sql`
    select ${bucket} as bucket, ${refusals.gate} as gate, sum(${refusals.count})::bigint as n
    from ${refusals}
    where ${whereAll(conditions)}
    group by 1, 2`;
}

/**
 * Refusals per gate per time bucket over the filtered range, summing folded rows' counts so a
 * flood reads as a flood. Empty buckets are filled in so gaps show as zero, not as a line jump.
 */
export async function countRefusalsByGate(db: Db, params: ChartParams): Promise<GateChart> {
  const { query, from, to, bucketMs, origin } = gateChartQuery(params);
  const rows = resultRows<{ bucket: Date | string; gate: Gate; n: string | number }>(await db.execute(query));
  const byStart = new Map<number, GateBucket>();
  for (let t = origin.getTime(); t < to.getTime(); t += bucketMs) {
    byStart.set(t, { start: new Date(t).toISOString(), ...emptyCounts() });
  }
  const totals = emptyCounts();
  for (const r of rows) {
    const b = byStart.get(new Date(r.bucket).getTime());
    const n = Number(r.n);
    if (b) b[r.gate] += n;
    totals[r.gate] += n;
  }
  return { from, to, bucketMs, buckets: [...byStart.values()], totals };
}
