import { and, desc, eq, gt, gte, lt, lte, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { windowTotalsOf } from "@/lib/counters/window-totals";
import { usage } from "@/db/schema";

// Usage counters of the windows open at `now`. A range test on the window (rather than computing
// each window's start) reads calendar windows and first-hit cooldowns the same way. The totals of
// a window with many counters come from the worker (lib/counters/window-totals.ts).

export type UsageTotals = { scopes: number; settled: number; held: number; busiest: number };

export async function currentUsageTotals(db: Db, ceilingIds: number[], now: Date): Promise<Map<number, UsageTotals>> {
  if (ceilingIds.length === 0) return new Map();
  // A cooldown has several windows open at once (one per destination): summed per ceiling.
  const rows = resultRows<{ limit_id: number; scopes: string; settled: string; held: string; busiest: string }>(
    await db.execute(sql`
      select w.limit_id, sum(w.counters) as scopes, sum(w.settled) as settled, sum(w.held) as held, max(w.busiest) as busiest
      from (${windowTotalsOf("ceiling", ceilingIds, { open: now })}) w
      group by w.limit_id`),
  );
  return new Map(rows.map((r) => [r.limit_id, { scopes: Number(r.scopes), settled: Number(r.settled), held: Number(r.held), busiest: Number(r.busiest) }]));
}

export type ScopeUsage = { scopeKey: string; settled: number; held: number };

/** The accounts (or destinations) using a ceiling most in the open window. */
export async function topScopes(db: Db, ceilingId: number, now: Date, limit = 5): Promise<ScopeUsage[]> {
  return db
    .select({ scopeKey: usage.scopeKey, settled: usage.settled, held: usage.held })
    .from(usage)
    .where(and(eq(usage.ceilingId, ceilingId), lte(usage.windowStart, now), gt(usage.windowEnd, now)))
    .orderBy(desc(sql`${usage.settled} + ${usage.held}`), usage.scopeKey)
    .limit(limit);
}

/** Settled plus held of one global ceiling over windows starting in [from, to). */
export async function usageSince(db: Db, ceilingId: number, from: Date, to: Date): Promise<number> {
  const [row] = await db
    .select({ total: sql<number>`coalesce(sum(${usage.settled} + ${usage.held}), 0)`.mapWith(Number) })
    .from(usage)
    .where(and(eq(usage.ceilingId, ceilingId), eq(usage.scopeKey, ""), gte(usage.windowStart, from), lt(usage.windowStart, to)));
  return row?.total ?? 0;
}
