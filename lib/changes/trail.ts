import { and, gte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents, type AuditEvent } from "@/db/schema";

// A change request's audit trail for its page: its lifecycle events and refused tries (target
// change_request:<id>) and the change it applied (ceiling.adjust, ... with details.requestId). Bounded below by when it was asked so the
// (at, id) index serves it however long the log grows.

export type TrailEvent = AuditEvent;

export async function listRequestTrail(db: Db, request: { id: number; requestedAt: Date }, limit = 50): Promise<AuditEvent[]> {
  const id = String(request.id);
  const target = `change_request:${request.id}`;
  // A minute of slack: the audit row and the request row are stamped by the same transaction's clock.
  const since = new Date(request.requestedAt.getTime() - 60_000);
  return db
    .select()
    .from(auditEvents)
    .where(and(gte(auditEvents.at, since), sql`(${auditEvents.target} = ${target} or ${auditEvents.details}->>'requestId' = ${id})`))
    .orderBy(auditEvents.at, auditEvents.id)
    .limit(limit);
}
