"use client";

import { useActionState, useId, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";

const recordAction = runAction.bind(null, "provider_cap.record");

export type ProviderCapFormValues = { measure: "units" | "money"; window: "day" | "month"; amount: number; setAt: string };

/** Micros as the decimal an admin typed ("250.5"), in integers so nothing drifts on the way back. */
export function microsAsDecimal(micros: number): string {
  const whole = Math.floor(micros / 1_000_000);
  const fraction = String(micros % 1_000_000)
    .padStart(6, "0")
    .replace(/0+$/, "");
  return fraction === "" ? String(whole) : `${whole}.${fraction}`;
}

/** Records the limit set at the provider and where; the amount is units or money of the endpoint's currency. */
export function ProviderCapForm({
  endpointKey,
  unit,
  currency,
  current,
}: {
  endpointKey: string;
  unit: string;
  currency: string;
  current: ProviderCapFormValues | null;
}) {
  const id = useId();
  const [state, formAction, pending] = useActionState(recordAction, IDLE);
  const [measure, setMeasure] = useState<"units" | "money">(current?.measure ?? "money");
  const amount = current === null ? "" : current.measure === "money" ? microsAsDecimal(current.amount) : String(current.amount);
  return (
    <form action={formAction} className="space-y-3" data-testid="provider-cap-form">
      <input type="hidden" name="endpointKey" value={endpointKey} />
      <div className="grid gap-3 sm:grid-cols-4">
        <div>
          <label htmlFor={`${id}-measure`} className={labelClass}>
            Limits
          </label>
          <select
            id={`${id}-measure`}
            name="measure"
            value={measure}
            onChange={(e) => setMeasure(e.target.value === "units" ? "units" : "money")}
            className={inputClass}
          >
            <option value="money">Money ({currency})</option>
            <option value="units">Units ({unit})</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-window`} className={labelClass}>
            Per
          </label>
          <select id={`${id}-window`} name="window" defaultValue={current?.window ?? "month"} className={inputClass}>
            <option value="day">Day</option>
            <option value="month">Month</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-amount`} className={labelClass}>
            Amount
          </label>
          <input
            id={`${id}-amount`}
            name="amount"
            type="text"
            inputMode={measure === "money" ? "decimal" : "numeric"}
            required
            autoComplete="off"
            defaultValue={current?.measure === measure ? amount : ""}
            key={measure}
            aria-describedby={`${id}-hint`}
            className={inputClass}
          />
        </div>
        <div>
          <label htmlFor={`${id}-set-at`} className={labelClass}>
            Where it is set
          </label>
          <input
            id={`${id}-set-at`}
            name="setAt"
            type="text"
            required
            maxLength={200}
            autoComplete="off"
            defaultValue={current?.setAt ?? ""}
            className={inputClass}
          />
        </div>
      </div>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        {measure === "money" ? `A plain amount in ${currency}, such as 250 or 250.50.` : `A whole number of ${unit}, such as 100000.`} Where: the
        provider&apos;s page or project, e.g. &quot;OpenAI project llm-prod, Settings &gt; Limits&quot;.
      </p>
      <SubmitButton pending={pending} pendingLabel="Saving…" testId="provider-cap-save">
        {current ? "Update the second cap" : "Record the second cap"}
      </SubmitButton>
      <ActionMessage state={state} testId="provider-cap" />
    </form>
  );
}
