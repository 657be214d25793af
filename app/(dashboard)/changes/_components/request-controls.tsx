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

/** Approve (an optional note) or reject (a note the requester reads), one form, two buttons. */
export function DecideRequestForm({ id }: { id: number }) {
  const field = useId();
  const [approved, approve, approving] = useActionState(approveAction, IDLE);
  const [rejected, reject, rejecting] = useActionState(rejectAction, IDLE);
  // Disabled until hydrated, as SubmitButton is: an early click would post the form without its action.
  const hydrated = useHydrated();
  const pending = !hydrated || approving || rejecting;
  return (
    <form className="space-y-3" data-testid="decide-request">
      <input type="hidden" name="id" value={id} />
      <div>
        <label htmlFor={`${field}-note`} className={labelClass}>Note (required to reject)</label>
        <input id={`${field}-note`} name="note" type="text" maxLength={500} autoComplete="off" className={inputClass} data-testid="decision-note" />
      </div>
      <div className="flex flex-wrap gap-2">
        <button type="submit" formAction={approve} disabled={pending} className={buttonClass} data-testid="approve-request">
          {approving ? "Approving…" : "Approve and apply"}
        </button>
        <button type="submit" formAction={reject} disabled={pending} className={dangerButtonClass} data-testid="reject-request">
          {rejecting ? "Rejecting…" : "Reject"}
        </button>
      </div>
      <ActionMessage state={approved} testId="approve-request" />
      <ActionMessage state={rejected} testId="reject-request" />
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
