import { InputError } from "@/lib/errors";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { staff, staffTokens } from "@/db/schema";
import { recordAudit } from "@/lib/audit/record";
import { StaffTokenError } from "./errors";
import type { StaffTokenSummary } from "./list";
import { generateStaffToken } from "./token";

export const StaffTokenName = z
  .string({ error: "a name is required" })
  .trim()
  .min(1, "a name is required")
  .max(100, "the name must be 100 characters or fewer");

export type CreatedStaffToken = {
  token: StaffTokenSummary;
  /** The full token. It exists only in this return value: show it once, never store it. */
  secret: string;
};

/**
 * A signed-in staff member makes a personal token for themself (never for someone else: it proves
 * who runs a command). It carries their session version, so a password change, a demotion or a
 * disable kills it as it ends their sessions. Audited in the same transaction; only the hash is kept.
 */
export async function createStaffToken(db: Db, p: { staffId: number; name: string }): Promise<CreatedStaffToken> {
  const name = StaffTokenName.safeParse(p.name);
  if (!name.success) throw InputError.of(name.error.issues.map((i) => i.message).join("; "));
  const generated = generateStaffToken();
  return db.transaction(async (tx) => {
    // Locked: a password change or demotion racing this waits, and the token gets the version after it.
    const [owner] = await tx.select().from(staff).where(eq(staff.id, p.staffId)).for("update");
    if (!owner || owner.disabledAt !== null) throw new StaffTokenError("forbidden", "only an enabled staff member may create a personal token");
    const [row] = await tx
      .insert(staffTokens)
      .values({ staffId: owner.id, name: name.data, prefix: generated.prefix, secretHash: generated.secretHash, sessionVersion: owner.sessionVersion })
      .returning();
    if (!row) throw new Error("staff token insert returned no row");
    await recordAudit(tx, {
      actorType: "staff",
      actor: owner.email,
      action: "staff_token.create",
      target: `${row.name} (cst_${row.prefix})`,
      details: { tokenId: row.id, prefix: row.prefix, name: row.name },
    });
    const { secretHash: _hash, ...summary } = row;
    return { token: summary, secret: generated.token };
  });
}
