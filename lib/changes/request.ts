import type { Db } from "@/db/client";
import type { ChangeRequest } from "@/db/schema";
import { alertRequested } from "./alert";
import { insertRequest, prepareAsk } from "./ask";
import { readText, recordLifecycle } from "./audit";
import type { RequestChangeParams } from "./types";
import { refusing, staffActor, verifyStaff } from "./who";

/**
 * Asks for a raise: an operator or an admin, with a reason. The request records what is in force
 * now (`before`), what it would be (`after`), the worst case a day both ways, and expires in 24
 * hours. Audited (change.request) and alerted to the approvers (change_request) in one transaction.
 */
export async function requestChange(db: Db, p: RequestChangeParams): Promise<ChangeRequest> {
  return refusing(db, p.requester, "request", { kind: p.kind }, async () => {
    const who = await verifyStaff(db, p.requester, "operator", "ask for a raise");
    const reason = readText(p.reason, true) ?? "";
    const now = p.now ?? new Date();
    const ask = await prepareAsk(db, p, now);
    return db.transaction(async (tx) => {
      const row = await insertRequest(tx, ask, who, reason, now, false);
      await recordLifecycle(tx, row, "change.request", staffActor(who), reason, {
        via: who.via,
        before: row.before,
        after: row.after,
        ...(row.endsAfterSeconds ? { endsAfterSeconds: row.endsAfterSeconds } : {}),
        ...(row.endsAt ? { endsAt: row.endsAt.toISOString() } : {}),
      });
      await alertRequested(tx, row);
      return row;
    });
  });
}
