import { asc, desc, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staff, staffTokens, type StaffToken } from "@/db/schema";

/** A token as its owner sees it: never its hash; `live` says whether it would be accepted now. */
export type StaffTokenSummary = Omit<StaffToken, "secretHash">;
export type StaffTokenListed = StaffTokenSummary & { live: boolean };

/** One member's own tokens, live ones first, newest first. */
export async function listStaffTokens(db: Db, p: { staffId: number }): Promise<StaffTokenListed[]> {
  const rows = await db
    .select({
      id: staffTokens.id,
      staffId: staffTokens.staffId,
      name: staffTokens.name,
      prefix: staffTokens.prefix,
      sessionVersion: staffTokens.sessionVersion,
      createdAt: staffTokens.createdAt,
      lastUsedAt: staffTokens.lastUsedAt,
      revokedAt: staffTokens.revokedAt,
      live: sql<boolean>`${staffTokens.revokedAt} is null and ${staff.disabledAt} is null and ${staffTokens.sessionVersion} = ${staff.sessionVersion}`,
    })
    .from(staffTokens)
    .innerJoin(staff, eq(staff.id, staffTokens.staffId))
    .where(eq(staffTokens.staffId, p.staffId))
    .orderBy(asc(sql`${staffTokens.revokedAt} is not null`), desc(staffTokens.createdAt), desc(staffTokens.id));
  return rows;
}
