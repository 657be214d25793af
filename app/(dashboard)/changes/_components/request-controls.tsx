"use client";

import { useActionState, useId } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";
import { useHydrated } from "@/components/use-hydrated";
import { buttonClass, dangerButtonClass, inputClass, labelClass, secondaryButtonClass } from "@/components/ui";

// The buttons a request's page offers. The page shows only those the viewer may use; each action
// checks again on the server (a requester's forged approval is refused and audited).

const approveAction = runAction.bind(null, "change.approve");
const rejectAction = runAction.bind(null, "change.reject");
const cancelAction = runAction.bind(null, "change.cancel");
const acknowledgeAction = runAction.bind(null, "change.acknowledge");

/**
 * Approve (an optional note) and reject (a note the requester reads): two forms, not one form with
 * two formActions, whose hidden action fields would arrive twice and be refused as duplicates.
 */
export function DecideRequestForm({ id }: { id: number }) {
  return (
    <div className="space-y-4" data-testid="decide-request">
      <DecisionForm id={id} decision="approve" />
      <DecisionForm id={id} decision="reject" />
    </div>
  );
}

function DecisionForm({ id, decision }: { id: number; decision: "approve" | "reject" }) {
  const field = useId();
  const [state, action, acting] = useActionState(decision === "approve" ? approveAction : rejectAction, IDLE);
  // Disabled until hydrated, as SubmitButton is: an early click would post the form without its action.
  const hydrated = useHydrated();
  const approve = decision === "approve";
  return (
    <form action={action} className="space-y-2">
      <input type="hidden" name="id" value={id} />
      <div>
        <label htmlFor={`${field}-note`} className={labelClass}>
          {approve ? "Note (optional)" : "Why it is rejected (required)"}
        </label>
        <input
          id={`${field}-note`}
          name="note"
          type="text"
          maxLength={500}
          autoComplete="off"
          className={inputClass}
          data-testid={approve ? "approve-note" : "decision-note"}
        />
      </div>
      <button type="submit" disabled={!hydrated || acting} className={approve ? buttonClass : dangerButtonClass} data-testid={`${decision}-request`}>
        {approve ? (acting ? "Approving…" : "Approve and apply") : acting ? "Rejecting…" : "Reject"}
      </button>
      <ActionMessage state={state} testId={`${decision}-request`} />
    </form>
  );
}

/** One button with the request's id: cancel (the requester) or acknowledge (another admin). */
export function RequestButton({ id, kind }: { id: number; kind: "cancel" | "acknowledge" }) {
  const [state, action, pending] = useActionState(kind === "cancel" ? cancelAction : acknowledgeAction, IDLE);
  const testId = kind === "cancel" ? "cancel-request" : "acknowledge-break-glass";
  return (
    <form action={action} className="inline-flex flex-col items-start gap-1">
      <input type="hidden" name="id" value={id} />
      <SubmitButton pending={pending} pendingLabel={kind === "cancel" ? "Cancelling…" : "Acknowledging…"} className={secondaryButtonClass} testId={testId}>
        {kind === "cancel" ? "Cancel request" : "Acknowledge"}
      </SubmitButton>
      <ActionMessage state={state} testId={testId} />
    </form>
  );
}
