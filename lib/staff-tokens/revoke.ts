import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staff, staffTokens } from "@/db/schema";
import { recordAudit } from "@/lib/audit/record";
import { StaffTokenError } from "./errors";
import type { StaffTokenSummary } from "./list";

/**
 * Revokes one of the member's own tokens, audited in the same transaction. Someone else's token
 * reads as not found (its existence is not theirs to learn); revoking twice is an error, so the
 * audit log holds one revoke per token.
 */
export async function revokeStaffToken(db: Db, p: { id: number; staffId: number }): Promise<StaffTokenSummary> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ token: staffTokens, email: staff.email })
      .from(staffTokens)
      .innerJoin(staff, eq(staff.id, staffTokens.staffId))
      .where(and(eq(staffTokens.id, p.id), eq(staffTokens.staffId, p.staffId)))
      .for("update", { of: staffTokens });
    if (!row) throw new StaffTokenError("not_found", `you have no personal token with id ${p.id}`);
    if (row.token.revokedAt) throw new StaffTokenError("already_revoked", `token ${row.token.name} (cst_${row.token.prefix}) is already revoked`);
    const [updated] = await tx.update(staffTokens).set({ revokedAt: new Date() }).where(eq(staffTokens.id, row.token.id)).returning();
    if (!updated) throw new Error("staff token update returned no row");
    await recordAudit(tx, {
      actorType: "staff",
      actor: row.email,
      action: "staff_token.revoke",
      target: `${row.token.name} (cst_${row.token.prefix})`,
      details: { tokenId: row.token.id, prefix: row.token.prefix, name: row.token.name },
    });
    const { secretHash: _hash, ...summary } = updated;
    return summary;
  });
}
