import { and, desc, eq, gt, gte, inArray, lt, lte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { usage } from "@/db/schema";

// Usage counters of the windows open at `now`. A range test on the window (rather than computing
// each window's start) reads calendar windows and first-hit cooldowns the same way.

export type UsageTotals = { scopes: number; settled: number; held: number; busiest: number };

export async function currentUsageTotals(db: Db, ceilingIds: number[], now: Date): Promise<Map<number, UsageTotals>> {
  if (ceilingIds.length === 0) return new Map();
  const rows = await db
    .select({
      ceilingId: usage.ceilingId,
      scopes: sql<number>`count(*)`.mapWith(Number),
      settled: sql<number>`coalesce(sum(${usage.settled}), 0)`.mapWith(Number),
      held: sql<number>`coalesce(sum(${usage.held}), 0)`.mapWith(Number),
      busiest: sql<number>`coalesce(max(${usage.settled} + ${usage.held}), 0)`.mapWith(Number),
    })
    .from(usage)
    .where(and(inArray(usage.ceilingId, ceilingIds), lte(usage.windowStart, now), gt(usage.windowEnd, now)))
    .groupBy(usage.ceilingId);
  return new Map(rows.map((r) => [r.ceilingId, r]));
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
