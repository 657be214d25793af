"use client";

import { useId } from "react";
import { inputClass, labelClass, secondaryButtonClass } from "@/components/ui";
import type { ActionState } from "@/app/_lib/action-state";
import type { CeilingSpec, EndpointFields } from "@/lib/catalog/spec";
import { ceilingSentence } from "@/lib/catalog/worst-case";
import { parseLimitInput } from "@/lib/limits/parse";
import { FieldError } from "./field-error";

// The ceiling rows of the catalog forms, as typed text; each row states its guarantee as soon as
// it reads as one, so the sentence and the worst case are seen before anything is saved.

export type CeilingRowText = {
  metric: string;
  scope: string;
  window: string;
  windowSeconds: string;
  destinationKind: string;
  value: string;
  min: string;
  max: string;
  default: string;
  alertThresholds: string;
};

export const emptyCeilingRow: CeilingRowText = {
  metric: "units",
  scope: "global",
  window: "utc_day",
  windowSeconds: "",
  destinationKind: "",
  value: "",
  min: "0",
  max: "",
  default: "",
  alertThresholds: "50, 80, 100",
};

export function rowOfSpec(c: CeilingSpec): CeilingRowText {
  return {
    metric: c.metric,
    scope: c.scope,
    window: c.window,
    windowSeconds: c.windowSeconds === undefined ? "" : String(c.windowSeconds),
    destinationKind: c.destinationKind ?? "",
    value: String(c.value),
    min: String(c.min),
    max: String(c.max),
    default: String(c.default),
    alertThresholds: c.alertThresholds.join(", "),
  };
}

/** A typed whole number for the live preview, by the server's own rule; undefined until it reads as one. */
export function previewWhole(s: string): number | undefined {
  const parsed = parseLimitInput(s);
  return parsed.ok ? parsed.value : undefined;
}

/** The row as a spec if every number reads, for the preview only: the server parses for real. */
export function previewSpec(row: CeilingRowText): CeilingSpec | undefined {
  const value = previewWhole(row.value);
  if (value === undefined) return undefined;
  const windowSeconds = previewWhole(row.windowSeconds);
  if (row.window === "first_hit" && windowSeconds === undefined) return undefined;
  return {
    metric: row.metric === "calls" ? "calls" : "units",
    scope: row.scope === "caller" ? "caller" : row.scope === "destination" ? "destination" : "global",
    window: row.window === "billing_month" ? "billing_month" : row.window === "first_hit" ? "first_hit" : "utc_day",
    ...(row.window === "first_hit" && windowSeconds !== undefined ? { windowSeconds } : {}),
    ...(row.destinationKind === "email" || row.destinationKind === "phone" || row.destinationKind === "other" ? { destinationKind: row.destinationKind } : {}),
    value,
    min: previewWhole(row.min) ?? 0,
    max: previewWhole(row.max) ?? value,
    default: previewWhole(row.default) ?? value,
    alertThresholds: [],
  };
}

export function CeilingRowFields({
  row,
  path,
  onChange,
  onRemove,
  endpoint,
  state,
}: {
  row: CeilingRowText;
  path: string;
  onChange: (row: CeilingRowText) => void;
  onRemove?: () => void;
  endpoint: (EndpointFields & { key: string }) | undefined;
  state: ActionState;
}) {
  const id = useId();
  const set = (field: keyof CeilingRowText) => (e: { target: { value: string } }) => {
    const next = { ...row, [field]: e.target.value };
    // A cooldown is per destination and starts at the first hit: the two go together.
    if (field === "window" && e.target.value === "first_hit") next.scope = "destination";
    if (field === "scope" && e.target.value === "destination") next.window = "first_hit";
    if (field === "scope" && e.target.value !== "destination" && row.window === "first_hit") next.window = "utc_day";
    onChange(next);
  };
  const spec = previewSpec(row);
  const sentence = spec && endpoint ? ceilingSentence(spec, endpoint) : undefined;
  const input = (field: keyof CeilingRowText, label: string, hint?: string) => (
    <div>
      <label htmlFor={`${id}-${field}`} className={labelClass}>
        {label}
      </label>
      <input
        id={`${id}-${field}`}
        type="text"
        inputMode="numeric"
        autoComplete="off"
        value={row[field]}
        onChange={set(field)}
        className={inputClass}
        aria-describedby={hint ? `${id}-${field}-hint` : undefined}
      />
      {hint ? (
        <p id={`${id}-${field}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
          {hint}
        </p>
      ) : null}
      <FieldError state={state} name={`${path}.${field}`} />
    </div>
  );
  return (
    <fieldset className="space-y-3 rounded-md border border-zinc-200 p-3 dark:border-zinc-800" data-testid={`ceiling-row-${path}`}>
      <legend className="px-1 text-sm font-medium">Ceiling</legend>
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-metric`} className={labelClass}>
            Metric
          </label>
          <select id={`${id}-metric`} value={row.metric} onChange={set("metric")} className={inputClass}>
            <option value="units">units</option>
            <option value="calls">calls</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-scope`} className={labelClass}>
            Scope
          </label>
          <select id={`${id}-scope`} value={row.scope} onChange={set("scope")} className={inputClass}>
            <option value="global">global (all callers)</option>
            <option value="caller">per caller (billing account)</option>
            <option value="destination">per destination (cooldown)</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-window`} className={labelClass}>
            Window
          </label>
          <select id={`${id}-window`} value={row.window} onChange={set("window")} className={inputClass}>
            <option value="utc_day">UTC day</option>
            <option value="billing_month">billing month</option>
            <option value="first_hit">cooldown from the first hit</option>
          </select>
        </div>
      </div>
      {row.window === "first_hit" ? (
        <div className="grid gap-3 sm:grid-cols-3">
          {input("windowSeconds", "Cooldown seconds", "86400 is 24 hours")}
          <div>
            <label htmlFor={`${id}-destinationKind`} className={labelClass}>
              Destination is
            </label>
            <select id={`${id}-destinationKind`} value={row.destinationKind} onChange={set("destinationKind")} className={inputClass}>
              <option value="">recognised from the value</option>
              <option value="email">an email address</option>
              <option value="phone">a phone number</option>
              <option value="other">something else (lower-cased)</option>
            </select>
            <FieldError state={state} name={`${path}.destinationKind`} />
          </div>
        </div>
      ) : null}
      <div className="grid gap-3 sm:grid-cols-5">
        {input("value", "Value")}
        {input("min", "Min")}
        {input("max", "Max")}
        {input("default", "Default")}
        {input("alertThresholds", "Alerts at %")}
      </div>
      <p className="text-sm" data-testid="ceiling-sentence" aria-live="polite">
        {sentence ? (
          <>
            <span className="font-medium">{sentence.guarantee}</span>
            {sentence.worstCase ? <span className="text-zinc-600 dark:text-zinc-400"> · {sentence.worstCase}</span> : null}
          </>
        ) : (
          <span className="text-zinc-600 dark:text-zinc-400">Type a whole value to see what this ceiling guarantees.</span>
        )}
      </p>
      {onRemove ? (
        <button type="button" className={secondaryButtonClass} onClick={onRemove}>
          Remove this ceiling
        </button>
      ) : null}
    </fieldset>
  );
}
