import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staff, staffTokens } from "@/db/schema";
import type { Role } from "@/lib/auth/roles";
import { StaffTokenError } from "./errors";
import { hashToken, STAFF_TOKEN_ENV, staffTokenPrefix } from "./token";

export type TokenOwner = { staffId: number; email: string; role: Role };

const HOW = `create one on the dashboard (Personal tokens, /tokens) and set ${STAFF_TOKEN_ENV}`;

/**
 * The staff member a personal token proves, or a refusal saying why: unknown, revoked, its owner
 * disabled, or their session version moved on since it was made (password changed, demoted,
 * disabled and enabled again). Matched by the SHA-256 only. Stamps last_used_at.
 */
export async function authenticateStaffToken(db: Db, token: string): Promise<TokenOwner> {
  const prefix = staffTokenPrefix(token.trim());
  if (prefix === null) throw new StaffTokenError("invalid_token", `${STAFF_TOKEN_ENV} is not a personal token (cst_…): ${HOW}`);
  const [row] = await db
    .select({
      id: staffTokens.id,
      revokedAt: staffTokens.revokedAt,
      version: staffTokens.sessionVersion,
      staffId: staff.id,
      email: staff.email,
      role: staff.role,
      disabledAt: staff.disabledAt,
      current: staff.sessionVersion,
    })
    .from(staffTokens)
    .innerJoin(staff, eq(staff.id, staffTokens.staffId))
    .where(eq(staffTokens.secretHash, hashToken(token.trim())));
  if (!row) throw new StaffTokenError("invalid_token", `personal token cst_${prefix}_… is not known here: ${HOW}`);
  if (row.revokedAt) throw new StaffTokenError("invalid_token", `personal token cst_${prefix}_… was revoked at ${row.revokedAt.toISOString()}: ${HOW}`);
  if (row.disabledAt) throw new StaffTokenError("invalid_token", `personal token cst_${prefix}_… belongs to ${row.email}, who is disabled`);
  if (row.version !== row.current) {
    throw new StaffTokenError(
      "invalid_token",
      `personal token cst_${prefix}_… of ${row.email} ended when their password, role or state changed after it was made: ${HOW}`,
    );
  }
  await db.update(staffTokens).set({ lastUsedAt: new Date() }).where(eq(staffTokens.id, row.id));
  return { staffId: row.staffId, email: row.email, role: row.role };
}
