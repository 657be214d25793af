import { reasonError } from "@/lib/audit/reason";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { endpoints, type ChangeRequest } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { readReason } from "@/lib/audit/reason";
import { ChangeControlError } from "@/lib/control/errors";

/** change.request, change.approve, change.reject, change.cancel, change.stale, change.expire, change.break_glass, change.acknowledge. */
export type LifecycleAction =
  "change.request" | "change.approve" | "change.reject" | "change.cancel" | "change.stale" | "change.expire" | "change.break_glass" | "change.acknowledge";

/** One event of a request's life, named by the request and on its endpoint's log when it has one. */
export async function recordLifecycle(
  tx: Db,
  r: ChangeRequest,
  action: LifecycleAction,
  actor: AuditActor,
  reason: string | null,
  details: Record<string, unknown> = {},
): Promise<void> {
  const [endpoint] = r.endpointId === null ? [] : await tx.select({ key: endpoints.key }).from(endpoints).where(eq(endpoints.id, r.endpointId));
  await recordAudit(tx, {
    ...auditActorFields(actor),
    action,
    target: `change_request:${r.id}`,
    endpointId: r.endpointId,
    endpointKey: endpoint?.key ?? null,
    ceilingId: r.ceilingId,
    reason,
    details: { requestId: r.id, kind: r.kind, summary: r.summary, requestedBy: r.requestedBy, ...details },
  });
}

/** A reason or note: the audit log's one rule (trimmed, at most 500 characters, no control characters). */
export function readText(text: string | undefined, required: boolean): string | null {
  const read = readReason(text, required);
  if (!read.ok) throw reasonError(read.problem, (message) => new ChangeControlError("reason_required", message));
  return read.text;
}
