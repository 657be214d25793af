import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staff } from "@/db/schema/staff";
import type { Role } from "./roles";

/** Who is signed in, as the dashboard sees it. The role is always the one in the database now. */
export type SessionStaff = { id: number; email: string; role: Role };

/** What a session token carries: the id and the session version it was issued under. */
export type AuthenticatedStaff = SessionStaff & { sessionVersion: number };

/**
 * Re-reads the staff row behind a session. Null when the member is gone, disabled, or their
 * session version moved on (disabled, demoted or password changed since the session began).
 */
export async function loadSessionStaff(db: Db, params: { id: number; sessionVersion: number }): Promise<AuthenticatedStaff | null> {
  const [row] = await db
    .select({
      id: staff.id,
      email: staff.email,
      role: staff.role,
      disabledAt: staff.disabledAt,
      sessionVersion: staff.sessionVersion,
    })
    .from(staff)
    .where(eq(staff.id, params.id))
    .limit(1);
  if (!row || row.disabledAt !== null || row.sessionVersion !== params.sessionVersion) return null;
  return { id: row.id, email: row.email, role: row.role, sessionVersion: row.sessionVersion };
}
