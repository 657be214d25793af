"use client";

import { useActionState, useId, useState } from "react";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { inputClass, labelClass } from "@/components/ui";
import { runAction } from "@/app/(dashboard)/actions";
import { CeilingRowFields, type CeilingRowText, emptyCeilingRow } from "./ceiling-rows";
import { EndpointFieldInputs, type EndpointFieldsText } from "./endpoint-fields";
import { previewFields } from "./new-endpoint-form";
import { SubmitButton } from "@/components/submit-button";
import { ReasonField } from "@/components/reason-field";
import { WhatIfPanel } from "@/components/what-if-panel";
import { AskForApproval } from "@/components/ask-approval";

const addCeilingAction = runAction.bind(null, "ceiling.add");
const setAlertThresholdsAction = runAction.bind(null, "ceiling.update");
const updateEndpointAction = runAction.bind(null, "endpoint.update");

function ReasonAndConfirm({ state, id }: { state: ActionState; id: string }) {
  const needsConfirm = state.status === "error" && state.code === "confirmation_required";
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <ReasonField id={id} />
      {needsConfirm ? (
        <div>
          <label htmlFor={`${id}-confirm`} className={labelClass}>
            Type the new value again to confirm
          </label>
          <input id={`${id}-confirm`} name="confirm" type="text" inputMode="numeric" autoComplete="off" className={inputClass} data-testid="confirm-raise" />
        </div>
      ) : null}
    </div>
  );
}

export function EditEndpointForm({ endpointKey, version, initial }: { endpointKey: string; version: number; initial: EndpointFieldsText }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(updateEndpointAction, IDLE);
  const [fields, setFields] = useState(initial);
  // After a conflict the form carries the version in force, so a deliberate second save goes through.
  const expected = state.status === "error" && state.currentVersion !== undefined ? state.currentVersion : version;
  // A larger per-call max needs a second admin; the server refuses it here too (approval_required).
  const typedMax = /^\d+$/.test(fields.perCallMax.trim()) ? Number(fields.perCallMax.trim()) : null;
  const askKind = state.status === "error" && state.code === "approval_required" ? state.askKind : undefined;
  // A price lowered while a budget charges the endpoint is a raise too: the server names it (askKind).
  const pricesLowered = askKind === "endpoint.prices";
  // So is a new billing day on an endpoint with a billing_month ceiling: it restarts the month's counters.
  const billingDayMoved = askKind === "endpoint.billing_day";
  const perCallMaxRaised = askKind === undefined ? typedMax !== null && typedMax > Number(initial.perCallMax) : askKind === "endpoint.per_call_max";
  return (
    <form action={formAction} className="space-y-3" data-testid="edit-endpoint-form">
      <input type="hidden" name="key" value={endpointKey} />
      <input type="hidden" name="expectedVersion" value={expected} />
      <EndpointFieldInputs value={fields} onChange={setFields} state={state} />
      <ReasonAndConfirm state={state} id={id} />
      {perCallMaxRaised ? (
        <AskForApproval
          kind="endpoint.per_call_max"
          canBreakGlass
          hasConfirm={state.status === "error" && state.code === "confirmation_required"}
          what="A larger per-call max is a raise (asked alone: save the other fields without it)"
        />
      ) : null}
      {pricesLowered ? (
        <AskForApproval
          kind="endpoint.prices"
          canBreakGlass
          what="A lower price where a budget charges this endpoint is a raise (asked alone: save the other fields without it)"
        />
      ) : null}
      {billingDayMoved ? (
        <AskForApproval
          kind="endpoint.billing_day"
          canBreakGlass
          what="A new billing day starts a new billing month for this endpoint's monthly ceilings, forgiving what they counted: it is a raise (asked alone: save the other fields without it)"
        />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…" testId="save-endpoint">
        Save endpoint
      </SubmitButton>
      <ActionMessage state={state} testId="save-endpoint" />
    </form>
  );
}

function whatIfFields(endpointKey: string, row: CeilingRowText): Record<string, string> {
  return {
    target: "new-ceiling",
    endpointKey,
    metric: row.metric,
    scope: row.scope,
    window: row.window,
    ...(row.window === "first_hit" ? { windowSeconds: row.windowSeconds.trim() } : {}),
  };
}

export function AddCeilingForm({ endpointKey, preview }: { endpointKey: string; preview: EndpointFieldsText }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(addCeilingAction, IDLE);
  const [row, setRow] = useState<CeilingRowText>({ ...emptyCeilingRow });
  return (
    <form action={formAction} className="space-y-3" data-testid="add-ceiling-form">
      <input type="hidden" name="key" value={endpointKey} />
      {(Object.keys(row) as (keyof CeilingRowText)[]).map((field) => (
        <input key={field} type="hidden" name={field} value={row[field]} />
      ))}
      <CeilingRowFields row={row} path="ceiling" onChange={setRow} endpoint={previewFields(preview, endpointKey)} state={state} />
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        A new ceiling binds the next reservation. A value 5× or more above its default asks you to type it again. To change a window or a scope, add the new
        ceiling and remove the old one: a window in progress is never reinterpreted.
      </p>
      {/* What the new ceiling would have refused on this endpoint's history ("no history" on a fresh one). */}
      <WhatIfPanel
        fields={whatIfFields(endpointKey, row)}
        value={/^[1-9]\d{0,15}$/.test(row.value.trim()) ? Number(row.value.trim()) : null}
        unit={row.metric === "calls" ? "calls" : preview.unit || "units"}
      />
      <ReasonAndConfirm state={state} id={id} />
      {/* A new ceiling above its default is a raise: the server says so (approval_required), then it can be asked. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="ceiling.add" canBreakGlass hasConfirm={false} what="A new ceiling above its default is a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Adding…" testId="add-ceiling">
        Add ceiling
      </SubmitButton>
      <ActionMessage state={state} testId="add-ceiling" />
    </form>
  );
}

export function AlertThresholdsForm({ endpointKey, ceilingId, thresholds }: { endpointKey: string; ceilingId: number; thresholds: number[] }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(setAlertThresholdsAction, IDLE);
  return (
    <form action={formAction} className="flex flex-wrap items-end gap-2" data-testid={`thresholds-form-${ceilingId}`}>
      <input type="hidden" name="key" value={endpointKey} />
      <input type="hidden" name="ceilingId" value={ceilingId} />
      <div>
        <label htmlFor={`${id}-t`} className="block text-xs font-medium">
          Alerts at %
        </label>
        <input id={`${id}-t`} name="alertThresholds" type="text" defaultValue={thresholds.join(", ")} autoComplete="off" className={`${inputClass} w-32`} />
      </div>
      <div>
        <label htmlFor={`${id}-r`} className="block text-xs font-medium">
          Reason
        </label>
        <input id={`${id}-r`} name="reason" type="text" required maxLength={500} autoComplete="off" className={`${inputClass} w-48`} />
      </div>
      <SubmitButton pending={pending}>Save alerts</SubmitButton>
      <ActionMessage state={state} testId={`thresholds-${ceilingId}`} />
    </form>
  );
}
