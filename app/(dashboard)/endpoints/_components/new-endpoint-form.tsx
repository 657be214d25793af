"use client";

import { useRouter } from "next/navigation";
import { useActionState, useEffect, useId, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { cardClass, inputClass, labelClass, secondaryButtonClass } from "@/components/ui";
import { useHydrated } from "@/components/use-hydrated";
import { type EndpointFields, NEEDS_GLOBAL_HINT } from "@/lib/catalog/spec";
import { describeWorstCase, proposedCeilings, worstCases } from "@/lib/catalog/worst-case";
import { runAction } from "@/app/(dashboard)/actions";
import { CeilingRowFields, type CeilingRowText, emptyCeilingRow, previewSpec, previewWhole, rowOfSpec } from "./ceiling-rows";
import { EndpointFieldInputs, type EndpointFieldsText } from "./endpoint-fields";
import { DEFAULT_PART_ROWS, previewParts } from "./part-rows";
import { FieldError } from "./field-error";
import { SubmitButton } from "@/components/submit-button";
import { ReasonField } from "@/components/reason-field";

const createEndpointAction = runAction.bind(null, "endpoint.create");

/** The endpoint fields as numbers where they read, for the live sentences. */
export function previewFields(f: EndpointFieldsText, key: string): (EndpointFields & { key: string }) | undefined {
  const perCallMax = previewWhole(f.perCallMax);
  const parts = previewParts(f.parts);
  if (perCallMax === undefined || parts === undefined || f.unit.trim() === "") return undefined;
  return {
    key,
    name: f.name,
    unit: f.unit.trim(),
    parts,
    currency: /^[A-Z]{3}$/.test(f.currency) ? f.currency : "USD",
    planAllowance: previewWhole(f.planAllowance) ?? null,
    billingDay: previewWhole(f.billingDay) ?? 1,
    perCallMax,
    throttlePerMinute: previewWhole(f.throttlePerMinute) ?? null,
    throttleFailOpen: f.throttleFailOpen,
  };
}

export function NewEndpointForm() {
  const id = useId();
  const router = useRouter();
  const hydrated = useHydrated();
  const [state, formAction, pending] = useActionState(createEndpointAction, IDLE);
  const [key, setKey] = useState("");
  const [fields, setFields] = useState<EndpointFieldsText>({
    name: "",
    unit: "",
    parts: DEFAULT_PART_ROWS,
    currency: "USD",
    planAllowance: "",
    billingDay: "1",
    perCallMax: "1",
    throttlePerMinute: "",
    throttleFailOpen: false,
  });
  const [rows, setRows] = useState<CeilingRowText[]>([]);

  useEffect(() => {
    if (state.status === "ok" && state.redirectTo) router.push(state.redirectTo);
  }, [state, router]);

  const endpoint = previewFields(fields, key);
  const specs = rows.map(previewSpec).filter((s) => s !== undefined);
  const worst = endpoint ? worstCases(specs, endpoint) : undefined;
  const allowance = previewWhole(fields.planAllowance);
  const propose = () => {
    const proposal = proposedCeilings(allowance ?? null).map(rowOfSpec);
    setRows([...proposal, ...rows.filter((r) => r.scope !== "global")]);
  };

  return (
    <form action={formAction} className="space-y-6" data-testid="new-endpoint-form">
      <section className={`${cardClass} space-y-3`}>
        <h2 className="text-base font-semibold">Endpoint</h2>
        <div>
          <label htmlFor={`${id}-key`} className={labelClass}>
            Key
          </label>
          <input
            id={`${id}-key`}
            name="key"
            type="text"
            autoComplete="off"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            className={`${inputClass} font-mono`}
            placeholder="sms.otp"
          />
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            Lower case, like email.subscribe; what services name in every reservation. It cannot change later.
          </p>
          <FieldError state={state} name="key" />
        </div>
        <EndpointFieldInputs value={fields} onChange={setFields} state={state} />
      </section>

      <section className={`${cardClass} space-y-3`}>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h2 className="text-base font-semibold">Ceilings</h2>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              className={secondaryButtonClass}
              disabled={!hydrated || allowance === undefined}
              onClick={propose}
              data-testid="propose-ceilings"
            >
              Propose from the plan
            </button>
            <button
              type="button"
              className={secondaryButtonClass}
              disabled={!hydrated}
              onClick={() => setRows([...rows, { ...emptyCeilingRow }])}
              data-testid="add-ceiling-row"
            >
              Add a ceiling
            </button>
          </div>
        </div>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          From a plan allowance the defensible pair is allowance / 30 per UTC day and the allowance per billing month, so a 31-day month cannot exceed the plan.
        </p>
        {rows.map((row, i) => (
          <CeilingRowFields
            key={i}
            row={row}
            path={`ceilings[${i}]`}
            endpoint={endpoint}
            state={state}
            onChange={(next) => setRows(rows.map((r, j) => (j === i ? next : r)))}
            onRemove={() => setRows(rows.filter((_, j) => j !== i))}
          />
        ))}
        <input type="hidden" name="ceilings" value={JSON.stringify(rows)} />
        {!rows.some((r) => r.scope === "global") ? (
          <p className="text-sm text-amber-800 dark:text-amber-300" data-testid="needs-global">
            {NEEDS_GLOBAL_HINT}
          </p>
        ) : null}
        <FieldError state={state} name="ceilings" />
        {worst && endpoint ? (
          <p className="text-sm" data-testid="worst-case">
            Worst case: {describeWorstCase(worst.day, "day", endpoint)}; {describeWorstCase(worst.month, "month", endpoint)}.
          </p>
        ) : null}
      </section>

      <section className={`${cardClass} space-y-3`}>
        <ReasonField id={id} />
        <SubmitButton pending={pending} pendingLabel="Creating…" testId="create-endpoint">
          Create endpoint
        </SubmitButton>
        <ActionMessage state={state} testId="create-endpoint" />
      </section>
    </form>
  );
}
