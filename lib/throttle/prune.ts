import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

/**
 * Deletes throttle counters older than `keepMinutes` (the gate reads two minutes, the dashboard
 * up to 60), at most `maxRows` at a time so a large backlog never holds long locks. Returns how
 * many rows went; call it again while it returns maxRows.
 */
export async function pruneThrottleCounters(db: Db, options: { keepMinutes?: number; maxRows?: number } = {}): Promise<number> {
  const keep = Math.max(61, Math.floor(options.keepMinutes ?? 120));
  const maxRows = Math.min(Math.max(1, Math.floor(options.maxRows ?? 5000)), 100_000);
  const rows = resultRows<{ n: number | string }>(
    await db.execute(sql`
      with doomed as (
        select endpoint_id, caller, minute from throttle_counters
        where minute < date_trunc('minute', now()) - make_interval(mins => ${keep})
        limit ${maxRows}
        for update skip locked
      ), gone as (
        delete from throttle_counters t using doomed d
        where t.endpoint_id = d.endpoint_id and t.caller = d.caller and t.minute = d.minute
        returning 1
      )
      select count(*) as n from gone`),
  );
  return Number(rows[0]?.n ?? 0);
}
