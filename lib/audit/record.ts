import { auditEvents, type NewAuditEvent } from "@/db/schema/audit-events";
import type { Db } from "@/db/client";

/**
 * Who did something: a signed-in staff member, the command line (OS user), the system itself, a
 * catalog file applied from the command line (`ceilings apply`, named by the OS user), or a trusted
 * API key (the billing service assigning a plan), named `ck_<prefix> (<key name>)` by apiKeyActor.
 */
export type AuditActor =
  | { type: "staff"; email: string }
  | { type: "cli"; name: string }
  | { type: "system"; name: string }
  | { type: "config"; name: string }
  | { type: "api_key"; name: string };

/**
 * An API key as the audit log names it: its prefix, which staff find on /api-keys, and its name,
 * which says whose service it is. The secret is never part of it.
 */
export function apiKeyActor(key: { prefix: string; name: string }): AuditActor {
  return { type: "api_key", name: `ck_${key.prefix} (${key.name})` };
}

export function auditActorFields(actor: AuditActor): Pick<NewAuditEvent, "actorType" | "actor"> {
  return actor.type === "staff" ? { actorType: "staff", actor: actor.email } : { actorType: actor.type, actor: actor.name };
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
