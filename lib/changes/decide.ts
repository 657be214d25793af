import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { changeRequests, type ChangeRequest } from "@/db/schema";
import { applyRequest } from "./apply";
import { readText, recordLifecycle } from "./audit";
import { ChangeControlError } from "@/lib/control/errors";
import { expireLocked } from "./expire";
import type { ApproveResult, Requester } from "./types";
import { refusing, requireIndependent, independenceRefusal, staffActor, type Verified, verifyStaff } from "./who";

// A second admin decides a pending request. The request row is locked FOR UPDATE first, so of two
// admins approving at once one applies and the other finds it no longer pending; the requester
// never decides their own, nor does anyone not independent of them (who.ts's requireIndependent,
// and the change_requests_independent trigger in the database: one rule, ceilings.staff_independent).

export async function lockRequest(tx: Db, id: number): Promise<ChangeRequest> {
  if (!Number.isSafeInteger(id) || id <= 0) throw new ChangeControlError("not_found", `no change request #${String(id).slice(0, 20)}`);
  const [row] = await tx.select().from(changeRequests).where(eq(changeRequests.id, id)).for("update");
  if (!row) throw new ChangeControlError("not_found", `no change request #${id}`);
  return row;
}

function notOwn(r: ChangeRequest, who: Verified, doing: string): void {
  if (r.requestedById === who.staffId) {
    throw new ChangeControlError("own_request", `${who.email} asked for #${r.id}: the requester never ${doing} their own request; another admin must`);
  }
}

function checkPending(r: ChangeRequest): void {
  if (r.state !== "pending") throw new ChangeControlError("not_pending", `request #${r.id} is ${r.state}, not pending: nothing to decide`);
}

async function decided(tx: Db, id: number, fields: Partial<typeof changeRequests.$inferInsert>): Promise<ChangeRequest> {
  const [row] = await tx
    .update(changeRequests)
    .set(fields)
    .where(eq(changeRequests.id, id))
    .returning()
    .catch((error: unknown) => {
      throw independenceRefusal(error, id) ?? error;
    });
  if (!row) throw new ChangeControlError("not_found", `no change request #${id}`);
  return row;
}

/**
 * Approves and applies, in one transaction under the target's locks. If what was in force when it
 * was asked has changed, the request becomes stale and nothing is applied (applied: false, the
 * message says what moved). An expired request is marked expired and refused.
 */
export async function approveChange(db: Db, p: { id: number; approver: Requester; note?: string; now?: Date }): Promise<ApproveResult> {
  return refusing(db, p.approver, "approve", { requestId: p.id }, async () => {
    const who = await verifyStaff(db, p.approver, "admin", "approve a raise");
    const note = readText(p.note, false);
    const now = p.now ?? new Date();
    const outcome = await db.transaction(async (tx) => {
      const request = await lockRequest(tx, p.id);
      notOwn(request, who, "approves");
      await requireIndependent(tx, request, who, "approve");
      checkPending(request);
      if (request.expiresAt.getTime() <= now.getTime()) return { expired: await expireLocked(tx, request, now), result: null };
      const actor = staffActor(who);
      const applied = await applyRequest(tx, request, actor, now);
      const decision = { decidedById: who.staffId, decidedBy: who.email, decidedAt: now, decisionNote: note };
      if (!applied.applied) {
        const row = await decided(tx, request.id, { ...decision, state: "stale", decisionNote: note ?? applied.message });
        await recordLifecycle(tx, row, "change.stale", actor, note, { message: applied.message, via: who.via });
        return { expired: null, result: { request: row, applied: false, message: `request #${row.id} is stale: ${applied.message}` } };
      }
      const row = await decided(tx, request.id, { ...decision, state: "applied" });
      await recordLifecycle(tx, row, "change.approve", actor, note, {
        via: who.via,
        ...(applied.raiseEndId !== null ? { raiseEndId: applied.raiseEndId } : {}),
      });
      return { expired: null, result: { request: row, applied: true, message: `applied: ${row.summary}` } };
    });
    if (outcome.expired) {
      throw new ChangeControlError(
        "expired",
        `request #${outcome.expired.id} expired at ${outcome.expired.expiresAt.toISOString()} (24 hours after it was asked): nothing was applied; ask again`,
      );
    }
    if (!outcome.result) throw new Error("approval decided nothing");
    return outcome.result;
  });
}

/** Rejects a pending request, with a note saying why (required). */
export async function rejectChange(db: Db, p: { id: number; approver: Requester; note: string; now?: Date }): Promise<ChangeRequest> {
  return refusing(db, p.approver, "reject", { requestId: p.id }, async () => {
    const who = await verifyStaff(db, p.approver, "admin", "reject a raise");
    const note = readText(p.note, true);
    const now = p.now ?? new Date();
    return db.transaction(async (tx) => {
      const request = await lockRequest(tx, p.id);
      notOwn(request, who, "rejects");
      await requireIndependent(tx, request, who, "reject");
      checkPending(request);
      const row = await decided(tx, request.id, { state: "rejected", decidedById: who.staffId, decidedBy: who.email, decidedAt: now, decisionNote: note });
      await recordLifecycle(tx, row, "change.reject", staffActor(who), note, { via: who.via });
      return row;
    });
  });
}

/** The requester withdraws their own pending request (only they may). */
export async function cancelChange(db: Db, p: { id: number; requester: Requester; now?: Date }): Promise<ChangeRequest> {
  return refusing(db, p.requester, "cancel", { requestId: p.id }, async () => {
    const who = await verifyStaff(db, p.requester, "viewer", "cancel a request");
    const now = p.now ?? new Date();
    return db.transaction(async (tx) => {
      const request = await lockRequest(tx, p.id);
      if (request.requestedById !== who.staffId)
        throw new ChangeControlError("forbidden", `only ${request.requestedBy}, who asked for #${request.id}, may cancel it; an admin may reject it`);
      checkPending(request);
      const row = await decided(tx, request.id, { state: "cancelled", decidedById: who.staffId, decidedBy: who.email, decidedAt: now });
      await recordLifecycle(tx, row, "change.cancel", staffActor(who), null, { via: who.via });
      return row;
    });
  });
}
