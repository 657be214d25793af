import { InputError } from "@/lib/errors";
import { and, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { alerts } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { AlertError } from "./errors";

/**
 * Acknowledges alerts; each newly acknowledged one gets an 'alert.ack' audit row in the same
 * transaction. Alerts already acknowledged keep who did it first. Returns how many changed.
 */
export async function acknowledgeAlerts(db: Db, p: { alertIds: number[]; actor: AuditActor }): Promise<number> {
  const ids = [...new Set(p.alertIds)];
  if (ids.length === 0) throw InputError.of("choose at least one alert to acknowledge");
  return db.transaction(async (tx) => {
    const existing = await tx.select({ id: alerts.id }).from(alerts).where(inArray(alerts.id, ids));
    if (existing.length !== ids.length) {
      const found = new Set(existing.map((r) => r.id));
      throw new AlertError("not_found", `no alert with id ${ids.filter((id) => !found.has(id)).join(", ")}`);
    }
    const changed = await tx
      .update(alerts)
      .set({ acknowledgedAt: sql`now()`, acknowledgedBy: actorName(p.actor) })
      .where(and(inArray(alerts.id, ids), isNull(alerts.acknowledgedAt)))
      .returning({ id: alerts.id, kind: alerts.kind, endpointId: alerts.endpointId, ceilingId: alerts.ceilingId, message: alerts.message });
    for (const a of changed) {
      await recordAudit(tx, {
        ...auditActorFields(p.actor),
        action: "alert.ack",
        endpointId: a.endpointId,
        ceilingId: a.ceilingId,
        target: `alert:${a.id}`,
        details: { alertId: a.id, kind: a.kind, message: a.message },
      });
    }
    return changed.length;
  });
}
