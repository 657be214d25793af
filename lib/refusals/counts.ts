import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { resultRows } from "@/db/client";
import { refusals } from "@/db/schema";
import type { RefusalFilters } from "./filters";
import { filterConditions, whereAll } from "./where";

/** Matching rows are counted up to this many; past it the page says "more than". */
export const COUNT_CAP = 10_000;
// Below this the planner's estimate is too rough to show; an exact count is cheap anyway.
const EXACT_BELOW = 100_000;

export type RowCount = { n: number; exact: boolean };

/**
 * Rows in the whole log. An exact count of millions of rows reads them all; pg_class.reltuples
 * (kept by autovacuum and ANALYZE) answers in microseconds and is shown as "about".
 */
export async function countAllRefusals(db: Db): Promise<RowCount> {
  const [estimate] = resultRows<{ n: number | string | null }>(
    await db.execute(sql`select reltuples::bigint as n from pg_class where oid = 'refusals'::regclass`),
  );
  const n = Number(estimate?.n ?? -1);
  if (n >= EXACT_BELOW) return { n, exact: false };
  const [exact] = resultRows<{ n: number | string }>(await db.execute(sql`select count(*) as n from refusals`));
  return { n: Number(exact?.n ?? 0), exact: true };
}

/** The capped count's query, unexecuted (the benchmark explains it). */
export function matchingCountQuery(filters: RefusalFilters) {
  const where = whereAll(filterConditions(filters));
  return sql`select count(*) as n from (select 1 from ${refusals} ${where ? sql`where ${where}` : sql``} limit ${COUNT_CAP + 1}) m`;
}

/** Matching rows, counted exactly up to COUNT_CAP: `exact` is false when there are more. */
export async function countMatchingRefusals(db: Db, filters: RefusalFilters): Promise<RowCount> {
  const [row] = resultRows<{ n: number | string }>(await db.execute(matchingCountQuery(filters)));
  const n = Number(row?.n ?? 0);
  return n > COUNT_CAP ? { n: COUNT_CAP, exact: false } : { n, exact: true };
}

/** When the oldest refusal still kept happened, or null for an empty log. */
export async function oldestRefusalAt(db: Db): Promise<Date | null> {
  // NULLS FIRST: the at index read backwards (it is DESC NULLS LAST), not a scan of the table.
  const [row] = await db
    .select({ at: refusals.at })
    .from(refusals)
    .orderBy(sql`${refusals.at} asc nulls first`)
    .limit(1);
  return row?.at ?? null;
}
