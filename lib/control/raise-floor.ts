import { and, eq, min } from "drizzle-orm";
import type { Db } from "@/db/client";
import { raiseEnds } from "@/db/schema";

// A temporary raise's floor: while a raise end is active on a ceiling or a budget, its revert_to is
// what stands once the raise is over. A min set above it meanwhile would pull the value back up at
// the end (the revert is clamped to the bounds) and make a temporary raise permanent, so bounds
// that do it are a raise (isBoundsRaise's `revertTo`), asked as ceiling.bounds or budget.bounds.

/** The lowest revert_to of the active raise ends on a ceiling or a budget; null when none is active. */
export async function activeRevertTo(db: Db, target: { ceilingId: number } | { budgetId: number }): Promise<number | null> {
  const on = "ceilingId" in target ? eq(raiseEnds.ceilingId, target.ceilingId) : eq(raiseEnds.budgetId, target.budgetId);
  const [row] = await db
    .select({ revertTo: min(raiseEnds.revertTo) })
    .from(raiseEnds)
    .where(and(eq(raiseEnds.state, "active"), on));
  return row?.revertTo ?? null;
}
