import Link from "next/link";
import type { ChangeRequest, ChangeRequestView } from "@/lib/changes";
import type { TrailEvent } from "@/lib/changes/trail";
import { AuditTable } from "@/components/audit-table";
import { ChangeRequestFacts, kindLabels } from "@/components/change-request-facts";
import { cardClass } from "@/components/ui";
import { hasRole, type Role } from "@/lib/auth/roles";
import { formatUtc } from "@/lib/format";
import { DecideRequestForm, RequestButton } from "./request-controls";

// A request's page from its prepared data. Which controls show is decided here, by staff id and
// role (requestControls); lib/changes and the database decide again when one is used.

/** `independent`: ceilings.staff_independent of the requester and the viewer, when the page asked (who.ts). */
export type Viewer = { staffId: number; role: Role; independent?: boolean };

export type RequestControls = { decide: boolean; cancel: boolean; acknowledge: boolean; ownRequest: boolean; notIndependent: boolean };

/** Approve/reject: an admin independent of who asked, while it is pending; cancel: who asked; acknowledge: an independent admin. */
export function requestControls(r: ChangeRequest, viewer: Viewer, now: Date): RequestControls {
  const ownRequest = r.requestedById === viewer.staffId;
  // Made by, or the maker of, who asked (through any chain): the database would refuse them.
  const notIndependent = !ownRequest && viewer.independent === false;
  const isAdmin = hasRole(viewer.role, "admin");
  const open = r.state === "pending" && r.expiresAt > now;
  return {
    decide: open && isAdmin && !ownRequest && !notIndependent,
    cancel: open && ownRequest,
    acknowledge: r.breakGlass && r.acknowledgedAt === null && isAdmin && !ownRequest && !notIndependent,
    ownRequest,
    notIndependent,
  };
}

const NOT_INDEPENDENT = "one of you created, promoted or set the password of the other, directly or through others";

/** What happened to a request that will not apply, in plain words. */
function outcome(r: ChangeRequest): string | null {
  switch (r.state) {
    case "stale":
      // lib/changes keeps what moved as the decision's note when the approver wrote none.
      return r.decisionNote
        ? `Stale: ${r.decisionNote}.`
        : "Stale: what was in force changed after it was asked, so nothing was applied. Ask again against what is in force now.";
    case "expired":
      return `Expired ${formatUtc(r.expiresAt)}: nobody decided within 24 hours, so nothing was applied. Ask again if it is still needed.`;
    case "rejected":
      return `Rejected by ${r.decidedBy ?? "an admin"}${r.decisionNote ? `: ${r.decisionNote}` : ""}. Nothing was applied.`;
    case "cancelled":
      return "Cancelled by who asked: nothing was applied.";
    default:
      return null;
  }
}

export function RequestPageView({ request: r, trail, viewer, now }: { request: ChangeRequestView; trail: TrailEvent[]; viewer: Viewer; now: Date }) {
  const controls = requestControls(r, viewer, now);
  const said = outcome(r);
  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/changes" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
            Change requests
          </Link>
        </p>
        <h1 className="break-words text-2xl font-semibold tracking-tight">
          {r.breakGlass ? "Break glass" : "Request"} #{r.id}: {kindLabels[r.kind] ?? r.kind}
        </h1>
      </div>

      {said ? (
        <p
          role="status"
          className="rounded-md border border-zinc-300 bg-zinc-100 p-3 text-sm dark:border-zinc-700 dark:bg-zinc-800"
          data-testid="request-outcome"
        >
          {said}
        </p>
      ) : null}

      <section className={cardClass} aria-label="What is asked">
        <ChangeRequestFacts request={r} now={now} />
      </section>

      <section aria-labelledby="decide-title" className={`${cardClass} space-y-3`}>
        <h2 id="decide-title" className="text-lg font-semibold">
          Decision
        </h2>
        {controls.decide ? <DecideRequestForm id={r.id} /> : null}
        {controls.cancel ? (
          <div className="space-y-2">
            <p className="text-sm" data-testid="own-request-note">
              You asked for this: a second admin must approve it. You can withdraw it.
            </p>
            <RequestButton id={r.id} kind="cancel" />
          </div>
        ) : null}
        {controls.acknowledge ? (
          <div className="space-y-2">
            <p className="text-sm">Applied alone by {r.requestedBy} as break glass. Acknowledge it once you have checked it; it then leaves the overview.</p>
            <RequestButton id={r.id} kind="acknowledge" />
          </div>
        ) : null}
        {!controls.decide && !controls.cancel && !controls.acknowledge ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="no-decision">
            {noControlText(r, controls, viewer, now)}
          </p>
        ) : null}
      </section>

      <section aria-labelledby="trail-title" className="space-y-3">
        <h2 id="trail-title" className="text-lg font-semibold">
          Audit trail
        </h2>
        <AuditTable events={trail} caption={`Audit trail of request #${r.id}`} />
      </section>
    </div>
  );
}

function noControlText(r: ChangeRequest, c: RequestControls, viewer: Viewer, now: Date): string {
  if (r.state === "pending" && r.expiresAt <= now) return "It has expired: it can no longer be approved.";
  if (r.state === "pending") {
    if (c.ownRequest) return "You asked for this: a second admin must approve it.";
    if (c.notIndependent && hasRole(viewer.role, "admin"))
      return `You are not independent of ${r.requestedBy} (${NOT_INDEPENDENT}): another admin must approve or reject it.`;
    return hasRole(viewer.role, "admin") ? "" : "Waiting for an admin other than who asked to approve or reject it.";
  }
  if (r.breakGlass && r.acknowledgedAt === null) {
    if (c.ownRequest) return "You broke glass: another admin must acknowledge it.";
    if (c.notIndependent && hasRole(viewer.role, "admin"))
      return `You are not independent of ${r.requestedBy} (${NOT_INDEPENDENT}): another admin must acknowledge it.`;
    return "Waiting for an admin to acknowledge it.";
  }
  return "Decided: nothing more to do.";
}
