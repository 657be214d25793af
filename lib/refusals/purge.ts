import { sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { resultRows } from "@/db/client";
import { DAY_MS, HOUR_MS } from "@/lib/time";

export const DEFAULT_PURGE_BATCH = 5_000;

export type PurgeOptions = {
  olderThanDays: number;
  batchSize?: number;
  /** Stop after this many batches (a worker tick may want to yield); unbounded by default. */
  maxBatches?: number;
  now?: Date;
};

/**
 * Deletes refusals older than the retention age in small batches and returns how many went.
 * Each batch is its own short statement (pass the pool, not a transaction): it picks the oldest
 * rows by the at index (read backwards, hence NULLS FIRST) and deletes them by id, so no lock is held for long and the refusal log
 * keeps taking inserts meanwhile. Rows locked by a concurrent fold are skipped, not waited for.
 * The rollups' old hours and days go too (purgeOldRefusalRollups); the count returned is the log's.
 */
export async function purgeOldRefusals(db: Db, options: PurgeOptions): Promise<number> {
  const { olderThanDays } = options;
  const batchSize = options.batchSize ?? DEFAULT_PURGE_BATCH;
  if (!Number.isInteger(olderThanDays) || olderThanDays < 1) {
    throw new RangeError(`olderThanDays must be a whole number of days, at least 1, got ${olderThanDays}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
    throw new RangeError(`batchSize must be a whole number from 1 to 100000, got ${batchSize}`);
  }
  const cutoff = new Date((options.now ?? new Date()).getTime() - olderThanDays * DAY_MS);
  const total = await deleteInBatches(
    db,
    sql`
      with doomed as (
        select id from refusals where at < ${cutoff.toISOString()}::timestamptz
        order by at asc nulls first limit ${batchSize}
        for update skip locked
      ), gone as (
        delete from refusals r using doomed where r.id = doomed.id returning 1
      )
      select count(*) as n from gone`,
    batchSize,
    options.maxBatches,
  );
  await purgeOldRefusalRollups(db, { cutoff, batchSize, maxBatches: options.maxBatches });
  return total;
}

/**
 * Deletes refusal_hourly rows for hours, and refusal_daily rows for days, wholly before the cutoff,
 * in batches like the log's purge, and returns how many went. The hour and the day the cutoff falls
 * in stay until a later purge: their raw rows are partly gone, so a chart reaching back to the
 * retention edge may count that hour (or, with day bars, that day) in full.
 */
export async function purgeOldRefusalRollups(db: Db, options: { cutoff: Date; batchSize: number; maxBatches?: number }): Promise<number> {
  let total = 0;
  for (const [table, column, unitMs] of [
    ["refusal_hourly", "hour", HOUR_MS],
    ["refusal_daily", "day", DAY_MS],
  ] as const) {
    const before = new Date(Math.floor(options.cutoff.getTime() / unitMs) * unitMs);
    const time = sql.identifier(column);
    // ctid is stable within one statement; the tables have no single-column key to delete by.
    total += await deleteInBatches(
      db,
      sql`
        with doomed as (
          select ctid from ${sql.identifier(table)} where ${time} < ${before.toISOString()}::timestamptz
          order by ${time} limit ${options.batchSize}
          for update skip locked
        ), gone as (
          delete from ${sql.identifier(table)} r using doomed where r.ctid = doomed.ctid returning 1
        )
        select count(*) as n from gone`,
      options.batchSize,
      options.maxBatches,
    );
  }
  return total;
}

/**
 * Runs one batch's delete (a statement answering how many rows went as n) until a batch deletes
 * fewer than batchSize, or maxBatches have run; returns how many went in all.
 */
async function deleteInBatches(db: Db, deleteBatch: SQL, batchSize: number, maxBatches: number | undefined): Promise<number> {
  let total = 0;
  for (let batch = 0; maxBatches === undefined || batch < maxBatches; batch += 1) {
    const [row] = resultRows<{ n: number | string }>(await db.execute(deleteBatch));
    const n = Number(row?.n ?? 0);
    total += n;
    if (n < batchSize) break;
  }
  return total;
}
