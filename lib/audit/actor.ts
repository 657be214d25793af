import type { AuditActor } from "@/lib/audit/record";

/** The name stored in killed_by and shown in the kill banner. */
export function actorName(actor: AuditActor): string {
  return actor.type === "staff" ? actor.email : actor.name;
}
