import { and, asc, eq, inArray, lte } from "drizzle-orm";
import type { Db } from "@/db/client";
import { changeRequests, type ChangeRequest } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { recordLifecycle } from "./audit";

// A request waits 24 hours for its second person. The worker job "change-requests" marks those
// past it expired; an approval that finds one past it first marks it itself (approveChange).

const SYSTEM: AuditActor = { type: "system", name: "change-requests" };

/** Marks one locked pending request expired, audited with the system as actor. */
export async function expireLocked(tx: Db, r: ChangeRequest, now: Date): Promise<ChangeRequest> {
  const [row] = await tx.update(changeRequests).set({ state: "expired", decidedAt: now }).where(eq(changeRequests.id, r.id)).returning();
  const expired = row ?? r;
  await recordLifecycle(tx, expired, "change.expire", SYSTEM, null, { expiresAt: r.expiresAt.toISOString() });
  return expired;
}

/**
 * Marks pending requests past their expiry expired; returns how many. Rows an approval holds are
 * skipped (SKIP LOCKED): that approval decides them, and a later run gets the rest. Safe with
 * several workers.
 */
export async function expireChangeRequests(db: Db, now: Date = new Date()): Promise<number> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(changeRequests)
      .where(and(eq(changeRequests.state, "pending"), lte(changeRequests.expiresAt, now)))
      .orderBy(asc(changeRequests.expiresAt))
      .limit(500)
      .for("update", { skipLocked: true });
    if (due.length === 0) return 0;
    await tx
      .update(changeRequests)
      .set({ state: "expired", decidedAt: now })
      .where(
        inArray(
          changeRequests.id,
          due.map((r) => r.id),
        ),
      );
    for (const r of due) await recordLifecycle(tx, { ...r, state: "expired" }, "change.expire", SYSTEM, null, { expiresAt: r.expiresAt.toISOString() });
    return due.length;
  });
}
