"use client";

import { IDLE } from "@/app/_lib/action-state";
import { useActionState, useId } from "react";
import { ActionMessage } from "@/components/action-message";
import { inputClass, labelClass } from "@/components/ui";
import { runAction } from "@/app/(dashboard)/actions";
import { SubmitButton } from "@/components/submit-button";
import { ReasonField } from "@/components/reason-field";
import { AskForApproval } from "@/components/ask-approval";

const setBoundsAction = runAction.bind(null, "ceiling.bounds");

export function BoundsForm({ ceilingId, min, max, version }: { ceilingId: number; min: number; max: number; version: number }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(setBoundsAction, IDLE);
  const conflictVersion = state.status === "error" ? state.current?.version : undefined;
  return (
    <form action={formAction} className="space-y-3" data-testid={`bounds-form-${ceilingId}`}>
      <input type="hidden" name="ceilingId" value={ceilingId} />
      <input type="hidden" name="expectedVersion" value={conflictVersion ?? version} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-min`} className={labelClass}>
            Minimum
          </label>
          <input id={`${id}-min`} name="min" type="text" inputMode="numeric" required defaultValue={String(min)} className={inputClass} />
        </div>
        <div>
          <label htmlFor={`${id}-max`} className={labelClass}>
            Maximum
          </label>
          <input id={`${id}-max`} name="max" type="text" inputMode="numeric" required defaultValue={String(max)} className={inputClass} />
        </div>
        <ReasonField id={id} />
      </div>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        A value outside the new bounds is pulled inside them, and logged. 0 stays allowed: it is the kill switch.
      </p>
      {/* A higher maximum is a raise: the server answers approval_required, then it can be asked. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="ceiling.bounds" canBreakGlass what="Higher bounds are a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…">
        Save bounds
      </SubmitButton>
      <ActionMessage state={state} testId="bounds" />
    </form>
  );
}
