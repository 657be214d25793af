import { and, eq, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents, staff } from "@/db/schema";
import { recordAudit, type AuditActor } from "@/lib/audit/record";
import { hasRole, type Role } from "@/lib/auth/roles";
import { ChangeControlError } from "./errors";
import type { Requester } from "./types";

// Who may do what is checked here against the staff row, not the role a caller passes: a session
// or `--as EMAIL` names a person, and that person's row in force (enabled, same email, its role)
// decides. The second person is the same person whatever session or tool they use: by staff id.

export type Verified = Requester & { role: Role };

const WHAT: Record<Role, string> = { viewer: "a viewer", operator: "an operator", admin: "an admin" };

export async function verifyStaff(db: Db, who: Requester, need: Role, doing: string): Promise<Verified> {
  const [row] = await db.select({ email: staff.email, role: staff.role, disabledAt: staff.disabledAt }).from(staff).where(eq(staff.id, who.staffId));
  if (!row || row.disabledAt !== null || row.email.toLowerCase() !== who.email.toLowerCase()) {
    throw new ChangeControlError("forbidden", `${who.email} is not an enabled staff member: only staff may ${doing}`);
  }
  if (!hasRole(row.role, need)) throw new ChangeControlError("forbidden", `${row.email} is ${WHAT[row.role]}: only ${need === "admin" ? "an admin" : "an operator or an admin"} may ${doing}`);
  return { ...who, email: row.email, role: row.role };
}

export function staffActor(who: Pick<Requester, "email">): AuditActor {
  return { type: "staff", email: who.email };
}

/**
 * A refused attempt (someone else's role, their own request, an expired or unknown one, a bad
 * reason) changes nothing but is logged, as the other *.rejected events are: change.refused.
 */
export async function recordRefusal(db: Db, who: Pick<Requester, "email" | "via">, attempt: string, error: ChangeControlError, details: Record<string, unknown> = {}): Promise<void> {
  await recordAudit(db, {
    actorType: "staff",
    actor: who.email,
    action: "change.refused",
    target: typeof details.requestId === "number" ? `change_request:${details.requestId}` : null,
    reason: null,
    details: { attempt, code: error.code, error: error.message, via: who.via, ...details },
  });
}

/** Runs `work`; a ChangeControlError it throws (but stale, which is an outcome) is logged first. */
export async function refusing<T>(db: Db, who: Pick<Requester, "email" | "via">, attempt: string, details: Record<string, unknown>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ChangeControlError && error.code !== "stale") {
      // The log is best effort: an actor the audit table refuses must not hide the real refusal.
      await recordRefusal(db, who, attempt, error, details).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * The second person must be a second person: an admin account the requester created (staff.add)
 * or made an admin (staff.role to admin) is theirs to sign in with, so it may not decide their
 * request. Read from the audit trail, where those staff events are recorded with the requester as
 * actor and the account's email as target.
 */
export async function requireNotMadeBy(db: Db, requesterEmail: string, who: Verified, id: number, doing: string): Promise<void> {
  const [made] = await db
    .select({ action: auditEvents.action })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.actorType, "staff"),
        sql`lower(${auditEvents.actor}) = lower(${requesterEmail})`,
        sql`lower(${auditEvents.target}) = lower(${who.email})`,
        or(eq(auditEvents.action, "staff.add"), and(eq(auditEvents.action, "staff.role"), sql`${auditEvents.details}->>'to' = 'admin'`)),
      ),
    )
    .limit(1);
  if (made) {
    const how = made.action === "staff.add" ? "created" : "made an admin";
    throw new ChangeControlError("own_request", `${who.email} was ${how} by ${requesterEmail}, who asked for #${id}: an account the requester made may not ${doing} their request; another admin must`);
  }
}
