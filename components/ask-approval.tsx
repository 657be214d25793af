"use client";

import { useActionState, useId, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "./action-message";
import { useHydrated } from "./use-hydrated";
import { dangerButtonClass, inputClass, labelClass, secondaryButtonClass } from "./ui";

// Placed inside an edit form when what is typed is a raise: the form's own fields (the value, the
// reason, the 5x retype) go with the ask, which these buttons send to their own actions instead of
// the direct save. Each action checks the role again; break glass is offered to admins only.

const askAction = runAction.bind(null, "change.request");
const breakGlassAction = runAction.bind(null, "change.break_glass");

export type AskKind =
  | "ceiling.value"
  | "ceiling.bounds"
  | "ceiling.add"
  | "budget.value"
  | "endpoint.per_call_max"
  | "endpoint.unarchive"
  | "budget.unarchive"
  | "plan.value"
  | "account.plan"
  | "ceiling.override"
  | "budget.override"
  | "budget.create"
  | "budget.members"
  | "budget.archive"
  | "endpoint.prices"
  | "endpoint.billing_day";

type End = "none" | "for" | "until";

type AskForApprovalProps = {
  kind: AskKind;
  canBreakGlass: boolean;
  what?: string;
  /** The form already shows its own "type it again" field; else this one appears when the ask needs it. */
  hasConfirm?: boolean;
};

export function AskForApproval({ kind, canBreakGlass, what = "This is a raise", hasConfirm = false }: AskForApprovalProps) {
  const id = useId();
  const hydrated = useHydrated();
  const [end, setEnd] = useState<End>("none");
  const [askState, ask, asking] = useActionState(askAction, IDLE);
  const [glassState, glass, breaking] = useActionState(breakGlassAction, IDLE);
  const pending = asking || breaking;
  // A raise of 5x or more is typed twice, asked or not: lib/changes says so and the field appears.
  const needsConfirm = !hasConfirm && [askState, glassState].some((s) => s.status === "error" && s.code === "confirmation_required");
  return (
    <div
      className="space-y-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm dark:border-amber-800 dark:bg-amber-950/40"
      data-testid="raise-needs-approval"
    >
      <input type="hidden" name="kind" value={kind} />
      <p>
        {what}: it needs a second admin. Ask for approval and it is applied when another admin approves it (within 24 hours); the reason above goes with it.
      </p>
      <fieldset className="space-y-2">
        <legend className={labelClass}>Ends</legend>
        <div className="flex flex-wrap gap-x-4 gap-y-1">
          {(["none", "for", "until"] as const).map((mode) => (
            <label key={mode} className="inline-flex items-center gap-1.5">
              <input type="radio" name="endMode" value={mode} checked={end === mode} onChange={() => setEnd(mode)} data-testid={`raise-end-${mode}`} />
              {mode === "none" ? "stays" : mode === "for" ? "for a while" : "until a time (UTC)"}
            </label>
          ))}
        </div>
        {end === "for" ? (
          <div className="flex flex-wrap items-end gap-2">
            <div>
              <label htmlFor={`${id}-for`} className="sr-only">
                How long
              </label>
              <input
                id={`${id}-for`}
                name="endsFor"
                type="text"
                inputMode="numeric"
                required
                autoComplete="off"
                className={`${inputClass} w-24`}
                data-testid="raise-ends-for"
              />
            </div>
            <div>
              <label htmlFor={`${id}-unit`} className="sr-only">
                Unit
              </label>
              <select id={`${id}-unit`} name="endsUnit" defaultValue="hours" className={inputClass} data-testid="raise-ends-unit">
                <option value="minutes">minutes</option>
                <option value="hours">hours</option>
              </select>
            </div>
            <span className="pb-2 text-zinc-600 dark:text-zinc-400">after it is applied; then the value from before is put back</span>
          </div>
        ) : null}
        {end === "until" ? (
          <div>
            <label htmlFor={`${id}-until`} className="sr-only">
              Until (UTC)
            </label>
            <input id={`${id}-until`} name="endsAt" type="datetime-local" required className={`${inputClass} sm:w-64`} data-testid="raise-ends-at" />
            <p className="mt-1 text-zinc-600 dark:text-zinc-400">Read as UTC; then the value from before is put back.</p>
          </div>
        ) : null}
      </fieldset>
      {needsConfirm ? (
        <div>
          <label htmlFor={`${id}-confirm`} className={labelClass}>
            Type the new value again to confirm
          </label>
          <input
            id={`${id}-confirm`}
            name="confirm"
            type="text"
            inputMode="decimal"
            autoComplete="off"
            required
            className={`${inputClass} sm:w-64`}
            data-testid="ask-confirm"
          />
        </div>
      ) : null}
      {/* The actions only once hydrated: a server-rendered formAction puts its hidden action fields
          in the form, and two of them (ask, break glass) arrive as duplicate fields and are refused. */}
      <div className="flex flex-wrap gap-2">
        <button
          type="submit"
          formAction={hydrated ? ask : undefined}
          disabled={!hydrated || pending}
          className={secondaryButtonClass}
          data-testid="ask-approval"
        >
          {asking ? "Asking…" : "Ask for approval"}
        </button>
        {canBreakGlass ? (
          <button
            type="submit"
            formAction={hydrated ? glass : undefined}
            disabled={!hydrated || pending}
            className={dangerButtonClass}
            data-testid="break-glass"
          >
            {breaking ? "Applying…" : "Break glass: apply now alone"}
          </button>
        ) : null}
      </div>
      {canBreakGlass ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Break glass is for when no second admin can be reached: it applies at once, needs a reason of 10 characters or more, alerts every destination, and
          stays on the overview until another admin acknowledges it.
        </p>
      ) : null}
      <ActionMessage state={askState} testId="ask-approval" />
      <ActionMessage state={glassState} testId="break-glass" />
    </div>
  );
}
