import type { Db } from "@/db/client";
import type { ChangeRequest } from "@/db/schema";
import { fireAlert } from "@/lib/alerts/fire";
import { formatCount, formatMoney } from "@/lib/format";

// The alerts of change control go through fireAlert like every other: ceilings.fire_alert queues a
// delivery to every enabled destination in the same transaction. Destinations have no per-kind
// filter today, so a break glass reaches all of them; should one be added, break_glass must stay
// outside it (docs/change-control.md).

function worstLine(r: ChangeRequest): string | null {
  if (r.worstMoneyBefore === null && r.worstMoneyAfter === null && r.worstCaseBefore === null && r.worstCaseAfter === null) return null;
  const side = (units: number | null, micros: number | null) =>
    micros === null && units === null
      ? "unbounded"
      : [micros !== null && r.currency ? formatMoney(micros, r.currency) : null, units !== null ? `${formatCount(units)} units` : null]
          .filter(Boolean)
          .join(", ");
  return `worst case a day ${side(r.worstCaseBefore, r.worstMoneyBefore)} → ${side(r.worstCaseAfter, r.worstMoneyAfter)}`;
}

const detailsOf = (r: ChangeRequest) => ({ requestId: r.id, kind: r.kind, summary: r.summary, requestedBy: r.requestedBy, link: `/changes/${r.id}` });

/** Approvers are alerted when a raise is asked. */
export async function alertRequested(tx: Db, r: ChangeRequest): Promise<void> {
  const worst = worstLine(r);
  await fireAlert(tx, {
    kind: "change_request",
    dedupeKey: `change_request:${r.id}`,
    endpointId: r.endpointId,
    ceilingId: r.ceilingId,
    message: `${r.requestedBy} asks for a raise: ${r.summary}${worst ? ` (${worst})` : ""}. Reason: ${r.reason}. Another admin approves or rejects it at /changes/${r.id}`,
    details: detailsOf(r),
  });
}

/** Break glass: to every destination at once. */
export async function alertBrokeGlass(tx: Db, r: ChangeRequest): Promise<void> {
  const worst = worstLine(r);
  await fireAlert(tx, {
    kind: "break_glass",
    dedupeKey: `break_glass:${r.id}`,
    endpointId: r.endpointId,
    ceilingId: r.ceilingId,
    message: `BREAK GLASS: ${r.requestedBy} applied a raise alone: ${r.summary}${worst ? ` (${worst})` : ""}. Reason: ${r.reason}. Another admin acknowledges it at /changes/${r.id}`,
    details: { ...detailsOf(r), breakGlass: true },
  });
}
