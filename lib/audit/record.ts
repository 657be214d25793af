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
 * Who acted on which endpoint (and which of its ceilings): the fields every catalog and ceiling
 * event starts with, so a call site names only what it did.
 */
export function auditOf(
  actor: AuditActor,
  endpoint: { id: number; key: string },
  ceilingId?: number,
): Pick<NewAuditEvent, "actorType" | "actor" | "endpointId" | "endpointKey" | "ceilingId"> {
  return { ...auditActorFields(actor), endpointId: endpoint.id, endpointKey: endpoint.key, ...(ceilingId === undefined ? {} : { ceilingId }) };
}

/**
 * Appends one audit event. Pass the transaction that makes the change, so the change and its
 * record commit or roll back together.
 */
export async function recordAudit(tx: Db, event: NewAuditEvent): Promise<void> {
  await tx.insert(auditEvents).values(event);
}
