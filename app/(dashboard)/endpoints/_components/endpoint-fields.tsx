"use client";

import { useId } from "react";
import type { ActionState } from "@/app/_lib/action-state";
import { inputClass, labelClass, secondaryButtonClass } from "@/components/ui";
import { unitLabel } from "@/lib/limits/guarantee";
import { describePrice, parsePrice } from "@/lib/money/price";
import { DEFAULT_PART, MAX_PARTS } from "@/lib/vocabulary";
import { FieldError } from "./field-error";
import type { PartRowText } from "./part-rows";

// The endpoint's own fields in the catalog forms, as typed text.

export type EndpointFieldsText = {
  name: string;
  unit: string;
  parts: PartRowText[];
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
  const text = (field: Exclude<keyof EndpointFieldsText, "parts" | "throttleFailOpen">, label: string, hint?: string, numeric = true) => (
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
        value={value[field]}
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
      {text("currency", "Currency", "Three letters, e.g. USD", false)}
      <PartRows value={value} onChange={(parts) => onChange({ ...value, parts })} state={state} />
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

/**
 * The priced parts: one (`units`) for a single-priced endpoint, or several (input and output
 * tokens), each with the price of one unit as a decimal of the currency. At least one stays.
 */
function PartRows({ value, onChange, state }: { value: EndpointFieldsText; onChange: (parts: PartRowText[]) => void; state: ActionState }) {
  const id = useId();
  const rows = value.parts;
  const unit = value.unit.trim() || "units";
  const currency = /^[A-Z]{3}$/.test(value.currency) ? value.currency : "USD";
  const set = (i: number, field: keyof PartRowText) => (e: { target: { value: string } }) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, [field]: e.target.value } : r)));
  return (
    <fieldset className="space-y-2 sm:col-span-2" data-testid="part-rows">
      <legend className={labelClass}>Price per unit, by part</legend>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        A decimal of the currency for one unit, exact to 12 places: 0.0079 an SMS, 0.0000025 a token ($2.50 per 1M). Several parts (input and output tokens) are
        priced apart; a worst case counts every unit at the dearest part.
      </p>
      {rows.map((row, i) => {
        const parsed = parsePrice(row.price);
        const preview = parsed.ok ? describePrice(parsed.pricePico, currency, unit, unitLabel(unit, 1)) : undefined;
        return (
          <div key={i} className="grid gap-2 sm:grid-cols-[10rem_1fr_auto]" data-testid={`part-row-${i}`}>
            <div>
              <label htmlFor={`${id}-name-${i}`} className="block text-xs font-medium">
                Part
              </label>
              <input
                id={`${id}-name-${i}`}
                type="text"
                autoComplete="off"
                value={row.name}
                onChange={set(i, "name")}
                className={`${inputClass} font-mono`}
                placeholder="input"
              />
              <FieldError state={state} name={`parts[${i}].name`} />
            </div>
            <div>
              <label htmlFor={`${id}-price-${i}`} className="block text-xs font-medium">
                Price of one unit ({currency})
              </label>
              <input
                id={`${id}-price-${i}`}
                type="text"
                inputMode="decimal"
                autoComplete="off"
                value={row.price}
                onChange={set(i, "price")}
                className={inputClass}
                placeholder="0.0000025"
              />
              <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid={`part-price-preview-${i}`} aria-live="polite">
                {preview ?? "Type a decimal such as 0.0079"}
              </p>
              <FieldError state={state} name={`parts[${i}].price`} />
            </div>
            <div className="flex items-end">
              <button
                type="button"
                className={secondaryButtonClass}
                disabled={rows.length <= 1}
                onClick={() => onChange(rows.filter((_, j) => j !== i))}
                data-testid={`remove-part-${i}`}
              >
                Remove
              </button>
            </div>
          </div>
        );
      })}
      <button
        type="button"
        className={secondaryButtonClass}
        disabled={rows.length >= MAX_PARTS}
        onClick={() => onChange([...rows, { name: rows.length === 1 && rows[0]?.name === DEFAULT_PART ? "output" : "", price: "" }])}
        data-testid="add-part"
      >
        Add a part
      </button>
      <input type="hidden" name="parts" value={JSON.stringify(rows)} />
      <FieldError state={state} name="parts" />
    </fieldset>
  );
}
