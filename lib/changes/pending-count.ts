import { and, count, eq, gt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { changeRequests } from "@/db/schema";

/** Requests still waiting for a second admin, for the navigation's badge: the pending partial index serves it. */
export async function countPendingRequests(db: Db, now = new Date()): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(changeRequests)
    .where(and(eq(changeRequests.state, "pending"), gt(changeRequests.expiresAt, now)));
  return row?.n ?? 0;
}
