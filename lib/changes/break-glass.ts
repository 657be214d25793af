import { InputError } from "@/lib/errors";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { changeRequests, type ChangeRequest } from "@/db/schema";
import { alertBrokeGlass } from "./alert";
import { applyRequest } from "./apply";
import { insertRequest, prepareAsk } from "./ask";
import { readText, recordLifecycle } from "./audit";
import { lockRequest } from "./decide";
import { ChangeControlError } from "@/lib/control/errors";
import { BREAK_GLASS_MIN_REASON, type Requester, type RequestChangeParams } from "./types";
import { refusing, requireIndependent, independenceRefusal, staffActor, verifyStaff } from "./who";

/**
 * An admin applies a raise alone when no second admin can be reached, with a reason of at least 10
 * characters. One transaction: the request row (applied, break_glass, no decider), the change under
 * the target's locks through the direct edit's write code, change.break_glass in the audit log and
 * a break_glass alert to every destination. It stays on the overview until another admin
 * acknowledges it.
 */
export async function breakGlass(db: Db, p: RequestChangeParams): Promise<ChangeRequest> {
  return refusing(db, p.requester, "break_glass", { kind: p.kind }, async () => {
    const who = await verifyStaff(db, p.requester, "admin", "break glass");
    const reason = readText(p.reason, true) ?? "";
    if (reason.length < BREAK_GLASS_MIN_REASON) {
      throw InputError.of(`break glass needs a reason of at least ${BREAK_GLASS_MIN_REASON} characters: say why no second admin could approve it`, "reason");
    }
    const now = p.now ?? new Date();
    const ask = await prepareAsk(db, p, now);
    return db.transaction(async (tx) => {
      const row = await insertRequest(tx, ask, who, reason, now, true);
      const actor = staffActor(who);
      const applied = await applyRequest(tx, row, actor, now);
      // What was read a moment ago moved before the locks were taken: nothing is applied.
      if (!applied.applied) throw new ChangeControlError("stale", applied.message);
      await recordLifecycle(tx, row, "change.break_glass", actor, reason, {
        via: who.via,
        before: row.before,
        after: row.after,
        ...(applied.raiseEndId !== null ? { raiseEndId: applied.raiseEndId } : {}),
      });
      await alertBrokeGlass(tx, row);
      return row;
    });
  });
}

/** Another admin, independent of the one who broke glass (who.ts), has seen it: it leaves the overview. */
export async function acknowledgeBreakGlass(db: Db, p: { id: number; admin: Requester; now?: Date }): Promise<ChangeRequest> {
  return refusing(db, p.admin, "acknowledge", { requestId: p.id }, async () => {
    const who = await verifyStaff(db, p.admin, "admin", "acknowledge a break glass");
    const now = p.now ?? new Date();
    return db.transaction(async (tx) => {
      const request = await lockRequest(tx, p.id);
      if (!request.breakGlass) throw new ChangeControlError("not_pending", `request #${request.id} is not a break glass: nothing to acknowledge`);
      if (request.requestedById === who.staffId)
        throw new ChangeControlError("own_request", `${who.email} broke glass on #${request.id}: another admin must acknowledge it`);
      await requireIndependent(tx, request, who, "acknowledge");
      if (request.acknowledgedAt !== null) throw new ChangeControlError("not_pending", `#${request.id} was already acknowledged by ${request.acknowledgedBy}`);
      const [row] = await tx
        .update(changeRequests)
        .set({ acknowledgedById: who.staffId, acknowledgedBy: who.email, acknowledgedAt: now })
        .where(eq(changeRequests.id, request.id))
        .returning()
        .catch((error: unknown) => {
          throw independenceRefusal(error, request.id) ?? error;
        });
      if (!row) throw new ChangeControlError("not_found", `no change request #${request.id}`);
      await recordLifecycle(tx, row, "change.acknowledge", staffActor(who), null, { via: who.via });
      return row;
    });
  });
}
