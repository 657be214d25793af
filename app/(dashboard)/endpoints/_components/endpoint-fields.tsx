"use client";

import { useId } from "react";
import type { ActionState } from "@/app/_lib/action-state";
import { inputClass, labelClass } from "@/components/ui";
import { formatMoney } from "@/lib/format";
import { previewWhole } from "./ceiling-rows";
import { FieldError } from "./field-error";

// The endpoint's own fields in the catalog forms, as typed text.

export type EndpointFieldsText = {
  name: string;
  unit: string;
  unitPriceMicros: string;
  currency: string;
  planAllowance: string;
  billingDay: string;
  perCallMax: string;
  throttlePerMinute: string;
  throttleFailOpen: boolean;
};

export function EndpointFieldInputs({ value, onChange, state }: { value: EndpointFieldsText; onChange: (v: EndpointFieldsText) => void; state: ActionState }) {
  const id = useId();
  const set = (field: keyof EndpointFieldsText) => (e: { target: { value: string } }) => onChange({ ...value, [field]: e.target.value });
  const price = previewWhole(value.unitPriceMicros);
  const text = (field: keyof EndpointFieldsText, label: string, hint?: string, numeric = true) => (
    <div>
      <label htmlFor={`${id}-${field}`} className={labelClass}>
        {label}
      </label>
      <input
        id={`${id}-${field}`}
        name={field}
        type="text"
        inputMode={numeric ? "numeric" : "text"}
        autoComplete="off"
        value={String(value[field])}
        onChange={set(field)}
        className={inputClass}
      />
      {hint ? <p className="text-xs text-zinc-600 dark:text-zinc-400">{hint}</p> : null}
      <FieldError state={state} name={field} />
    </div>
  );
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      {text("name", "Name", "What people call it: “Password reset SMS”", false)}
      {text("unit", "Unit (plural)", "What one call costs in: emails, messages, tokens", false)}
      {text("unitPriceMicros", "Unit price in micros", price === undefined ? "Millionths of the currency: 7900 is $0.0079" : `${formatMoney(price, value.currency || "USD")} per unit`)}
      {text("currency", "Currency", "Three letters, e.g. USD", false)}
      {text("planAllowance", "Plan allowance per billing month", "What the provider plan includes; empty if none")}
      {text("billingDay", "Billing day (1-28)", "The day of the month the invoice period starts")}
      {text("perCallMax", "Per-call max", "The most one call may reserve: it bounds the worst case of one call")}
      {text("throttlePerMinute", "Throttle per minute per caller (optional)", "A soft rate limit; empty for none")}
      <div className="flex items-center gap-2 sm:col-span-2">
        <input
          id={`${id}-failopen`}
          name="throttleFailOpen"
          type="checkbox"
          checked={value.throttleFailOpen}
          onChange={(e) => onChange({ ...value, throttleFailOpen: e.target.checked })}
        />
        <label htmlFor={`${id}-failopen`} className="text-sm">
          The throttle fails open (grants when its counter cannot be read; ceilings never do)
        </label>
      </div>
    </div>
  );
}
