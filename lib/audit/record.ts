import { auditEvents, type NewAuditEvent } from "@/db/schema/audit-events";
import type { Db } from "@/db/client";

/**
 * Who did something: a signed-in staff member, the command line (OS user), the system itself, or a
 * catalog file applied from the command line (`ceilings apply`, named by the OS user).
 */
export type AuditActor =
  | { type: "staff"; email: string }
  | { type: "cli"; name: string }
  | { type: "system"; name: string }
  | { type: "config"; name: string };

export function auditActorFields(actor: AuditActor): Pick<NewAuditEvent, "actorType" | "actor"> {
  return actor.type === "staff"
    ? { actorType: "staff", actor: actor.email }
    : { actorType: actor.type, actor: actor.name };
}

/**
 * Appends one audit event. Pass the transaction that makes the change, so the change and its
 * record commit or roll back together.
 */
export async function recordAudit(tx: Db, event: NewAuditEvent): Promise<void> {
  await tx.insert(auditEvents).values(event);
}
