"use client";

import type { ActionState } from "@/app/_lib/define-action";
import { useActionState, useId } from "react";
import { ActionMessage } from "@/components/action-message";
import { buttonClass, inputClass, labelClass } from "@/components/ui";
import { useHydrated } from "@/components/use-hydrated";
import { setOverrideAction } from "../actions";
import { formatCount } from "@/lib/format";

/** One billing account's own value on a per-caller ceiling; 0 blocks that account alone. */
export function OverrideForm({ ceilingId, min, max }: { ceilingId: number; min: number; max: number }) {
  const id = useId();
  const hydrated = useHydrated();
  const [state, formAction, pending] = useActionState(setOverrideAction, { status: "idle" } as ActionState);
  return (
    <form action={formAction} className="space-y-3" data-testid={`override-form-${ceilingId}`}>
      <input type="hidden" name="ceilingId" value={ceilingId} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-caller`} className={labelClass}>Billing account</label>
          <input id={`${id}-caller`} name="caller" type="text" required maxLength={200} autoComplete="off" className={inputClass} />
        </div>
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>Value for this account</label>
          <input id={`${id}-value`} name="input" type="text" inputMode="numeric" required autoComplete="off" aria-describedby={`${id}-hint`} className={inputClass} />
        </div>
        <div>
          <label htmlFor={`${id}-reason`} className={labelClass}>Reason</label>
          <input id={`${id}-reason`} name="reason" type="text" required maxLength={500} autoComplete="off" className={inputClass} />
        </div>
      </div>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        From {formatCount(min)} to {formatCount(max)}, clamped otherwise; 0 blocks this account alone without killing the endpoint.
      </p>
      <button type="submit" disabled={!hydrated || pending} className={buttonClass}>
        {pending ? "Saving…" : "Set override"}
      </button>
      <ActionMessage state={state} testId="override" />
    </form>
  );
}
