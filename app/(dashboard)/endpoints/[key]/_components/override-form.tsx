"use client";

import { AskForApproval } from "@/components/ask-approval";
import { IDLE } from "@/app/_lib/action-state";
import { useActionState, useId } from "react";
import { ActionMessage } from "@/components/action-message";
import { inputClass, labelClass } from "@/components/ui";
import { runAction } from "@/app/(dashboard)/actions";
import { SubmitButton } from "@/components/submit-button";
import { ReasonField } from "@/components/reason-field";
import { OverrideEndField } from "@/components/override-end-field";
import { formatCount } from "@/lib/format";

const setOverrideAction = runAction.bind(null, "ceiling.override");

/** One billing account's own value on a per-caller ceiling; 0 blocks that account alone. */
export function OverrideForm({ ceilingId, min, max }: { ceilingId: number; min: number; max: number }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(setOverrideAction, IDLE);
  return (
    <form action={formAction} className="space-y-3" data-testid={`override-form-${ceilingId}`}>
      <input type="hidden" name="ceilingId" value={ceilingId} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-caller`} className={labelClass}>
            Billing account
          </label>
          <input id={`${id}-caller`} name="caller" type="text" required maxLength={200} autoComplete="off" className={inputClass} />
        </div>
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>
            Value for this account
          </label>
          <input
            id={`${id}-value`}
            name="input"
            type="text"
            inputMode="numeric"
            required
            autoComplete="off"
            aria-describedby={`${id}-hint`}
            className={inputClass}
          />
        </div>
        <ReasonField id={id} />
        <OverrideEndField id={id} testId={`override-ends-${ceilingId}`} />
      </div>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        From {formatCount(min)} to {formatCount(max)}, clamped otherwise; 0 blocks this account alone without killing the endpoint.
      </p>
      {/* Above what binds the account (its override, else its plan or the ceiling's own): a raise, asked of a second admin. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="ceiling.override" canBreakGlass what="An override above what binds this account, or one that ends below it, is a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…">
        Set override
      </SubmitButton>
      <ActionMessage state={state} testId="override" />
    </form>
  );
}
