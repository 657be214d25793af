import { and, asc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, type Ceiling } from "@/db/schema";

// A billing_month ceiling counts in a window that starts on the endpoint's billing day, and its
// counters are keyed by that start (db/functions/decide_batch.sql, window_bounds). Moving the
// billing day moves the start of the month in force (on 3 December, day 1 starts it on the 1st,
// day 3 on the 3rd), so every billing_month counter of the endpoint starts again from zero: what the
// month had already counted is forgiven, and it could be forgiven again each day. So a billing-day
// change is a raise on an endpoint with a billing_month ceiling (any scope: per-caller counters,
// their plans' values and overrides are keyed the same way); elsewhere it moves nothing counted and
// stays instant. Budgets keep their own billing day, which never changes (lib/catalog/file-budgets.ts).

/** The endpoint's billing_month ceilings, in id order: the counters a billing-day change would restart. */
export async function billingMonthCeilings(db: Db, endpointId: number): Promise<Ceiling[]> {
  return db
    .select()
    .from(ceilings)
    .where(and(eq(ceilings.endpointId, endpointId), eq(ceilings.window, "billing_month")))
    .orderBy(asc(ceilings.id));
}

/** Whether moving the billing day from `before` to `after` is a raise, given the endpoint's ceilings. */
export function isBillingDayRaise(rows: readonly Pick<Ceiling, "window">[], before: number, after: number): boolean {
  return before !== after && rows.some((c) => c.window === "billing_month");
}
