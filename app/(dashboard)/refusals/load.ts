import type { Db } from "@/db/client";
import { listEndpointKeys } from "@/lib/catalog";
import { env } from "@/lib/env";
import {
  countAllRefusals,
  countMatchingRefusals,
  countRefusalsByGate,
  listRefusals,
  oldestRefusalAt,
  parseRefusalQuery,
  type GateChart,
  type RefusalFilters,
  type RefusalPage,
  type RowCount,
} from "@/lib/refusals";
import { firstValues, type SearchParams } from "@/lib/search-params";

export type RefusalsView = {
  /** The raw values, to refill the form even when they did not parse. */
  raw: Record<string, string>;
  errors: string[];
  filters: RefusalFilters;
  page: RefusalPage;
  chart: GateChart | null;
  total: RowCount;
  matching: RowCount | null;
  oldest: Date | null;
  retentionDays: number;
  endpointKeys: string[];
};

const EMPTY_PAGE: RefusalPage = { rows: [], newer: null, older: null };

/**
 * Everything the refusal page shows, read in parallel. Invalid filters show their errors and no
 * rows, rather than silently dropping a filter and presenting the whole log as the answer.
 */
export async function loadRefusalsView(db: Db, params: SearchParams, now = new Date()): Promise<RefusalsView> {
  const raw = firstValues(params);
  const parsed = parseRefusalQuery(params);
  const [total, oldest, endpointKeys] = await Promise.all([countAllRefusals(db), oldestRefusalAt(db), listEndpointKeys(db)]);
  const base = { raw, total, oldest, retentionDays: env().REFUSAL_RETENTION_DAYS, endpointKeys };
  if (!parsed.ok) return { ...base, errors: parsed.errors, filters: {}, page: EMPTY_PAGE, chart: null, matching: null };
  const { filters, position } = parsed;
  const filtered = Object.values(filters).some((v) => v !== undefined);
  const [page, chart, matching] = await Promise.all([
    listRefusals(db, { filters, position }),
    countRefusalsByGate(db, { filters, now }),
    filtered ? countMatchingRefusals(db, filters) : Promise.resolve(null),
  ]);
  return { ...base, errors: [], filters, page, chart, matching };
}

const DURATIONS: [number, string][] = [
  [30 * 86_400_000, "30 days"],
  [7 * 86_400_000, "week"],
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
];

/** "per hour", "per 15 minutes": the chart's bucket in words. */
export function bucketLabel(bucketMs: number): string {
  for (const [size, name] of DURATIONS) {
    if (bucketMs % size === 0) {
      const n = bucketMs / size;
      return n === 1 ? `per ${name}` : `per ${n} ${name}s`;
    }
  }
  return `per ${Math.round(bucketMs / 1000)} seconds`;
}
