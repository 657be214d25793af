"use client";

import { useActionState, useId, useState } from "react";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "@/components/action-message";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { ReasonField } from "@/components/reason-field";
import { OverrideEndField } from "@/components/override-end-field";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";
import { parseMoneyInput, previewAdjustment } from "@/lib/limits/parse";
import { Money } from "@/components/money";
import { WhatIfPanel } from "@/components/what-if-panel";
import { isValueRaise } from "@/lib/control/raise";
import { AskForApproval } from "@/components/ask-approval";
import { AskRaiseForm } from "@/components/ask-raise-form";

// The small forms a budget's page places: its value (clamp and 5x retype shown before saving),
// kill and restore, archive, and per-account overrides. Each calls one server action, which
// checks the role itself (admins; kill and restore operators too).

const adjustBudgetAction = runAction.bind(null, "budget.adjust");
const killBudgetAction = runAction.bind(null, "budget.kill");
const restoreBudgetAction = runAction.bind(null, "budget.restore");
const archiveBudgetAction = runAction.bind(null, "budget.archive");
const setOverrideAction = runAction.bind(null, "budget.override");
const removeOverrideAction = runAction.bind(null, "budget.override_remove");

export type AdjustBudgetFormProps = {
  budgetKey: string;
  value: number;
  valueBeforeKill: number | null;
  min: number;
  max: number;
  defaultValue: number;
  currency: string;
  version: number;
  /** Admins save a lower value and may break glass; operators reach the form only to ask for a raise. */
  isAdmin: boolean;
};

/**
 * A budget's value in money: shows what it will do before it is saved (clamp, kill, restore, a
 * raise to 5x or more asks for the value again), and keeps the version it was drawn from.
 */
export function AdjustBudgetForm(props: AdjustBudgetFormProps) {
  const id = useId();
  const [input, setInput] = useState("");
  const [confirm, setConfirm] = useState("");
  const [state, formAction, pending] = useActionState(async (previous: ActionState, formData: FormData) => {
    const result = await adjustBudgetAction(previous, formData);
    if (result.status === "ok") {
      setInput("");
      setConfirm("");
    }
    return result;
  }, IDLE);
  const version = state.status === "error" && state.currentVersion !== undefined ? state.currentVersion : props.version;
  const preview =
    input.trim() === ""
      ? null
      : previewAdjustment({
          raw: input,
          current: props.value,
          valueBeforeKill: props.valueBeforeKill,
          min: props.min,
          max: props.max,
          currency: props.currency,
        });
  const needsConfirmation = (preview?.ok === true && preview.needsConfirmation) || (state.status === "error" && state.code === "confirmation_required");
  const money = (m: number) => <Money micros={m} currency={props.currency} />;
  // A lower value (not a kill) shows what it would have refused over the last 30 days.
  const typed = input.trim() === "" ? null : parseMoneyInput(input, "value");
  const lower = typed?.ok === true && typed.micros > 0 && typed.micros < props.value ? typed.micros : null;
  // A raise is asked, not saved; the server says so too (approval_required) if the browser misjudged it.
  const raise =
    (preview?.ok === true && isValueRaise({ value: props.value, valueBeforeKill: props.valueBeforeKill, defaultValue: props.defaultValue }, preview.applied)) ||
    (state.status === "error" && state.code === "approval_required");
  return (
    <form action={formAction} className="space-y-3" data-testid={`budget-adjust-${props.budgetKey}`}>
      <input type="hidden" name="key" value={props.budgetKey} />
      <input type="hidden" name="expectedVersion" value={version} />
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>
            New value ({props.currency})
          </label>
          <input
            id={`${id}-value`}
            name="input"
            type="text"
            inputMode="decimal"
            autoComplete="off"
            value={input}
            onChange={(e) => setInput(e.target.value)}
            aria-describedby={`${id}-preview`}
            className={inputClass}
            data-testid="budget-adjust-value"
          />
        </div>
        <ReasonField id={id} testId="budget-adjust-reason" />
      </div>
      <p
        id={`${id}-preview`}
        aria-live="polite"
        data-testid="budget-adjust-preview"
        className={`text-sm ${preview?.ok === false ? "text-red-700 dark:text-red-400" : "text-zinc-700 dark:text-zinc-300"}`}
      >
        {preview === null ? (
          <>
            An amount such as 200 or 1.50, from {money(props.min)} to {money(props.max)}; 0 kills this budget.
          </>
        ) : preview.ok ? (
          preview.message
        ) : (
          preview.error
        )}
      </p>
      {needsConfirmation ? (
        <div>
          <label htmlFor={`${id}-confirm`} className={labelClass}>
            Type the value again to confirm
          </label>
          <input
            id={`${id}-confirm`}
            name="confirm"
            type="text"
            inputMode="decimal"
            autoComplete="off"
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            className={inputClass}
            data-testid="budget-adjust-confirm"
          />
        </div>
      ) : null}
      <WhatIfPanel fields={{ target: "budget", budgetKey: props.budgetKey }} value={lower} unit="money" currency={props.currency} />
      {raise ? (
        <AskForApproval kind="budget.value" canBreakGlass={props.isAdmin} hasConfirm={needsConfirmation} />
      ) : props.isAdmin ? (
        <SubmitButton pending={pending} pendingLabel="Saving…" testId="budget-adjust-save">
          Save value
        </SubmitButton>
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Operators ask for a raise here; an admin lowers a value, and anyone on call can kill.</p>
      )}
      <ActionMessage state={state} testId="budget-adjust" />
    </form>
  );
}

/** Kill (value 0, remembered for restore) or restore, one click and a confirmation; the reason is optional. */
export function BudgetKillButton({ budgetKey, killed, restoresTo }: { budgetKey: string; killed: boolean; restoresTo?: string }) {
  return killed ? (
    <ConfirmActionButton
      action={restoreBudgetAction}
      label="Restore"
      title={`Restore ${budgetKey}?`}
      description={`The budget goes back to ${restoresTo ?? "its value from before the kill"}; calls on its members are decided again from the next one.`}
      confirmLabel="Restore budget"
      fields={{ key: budgetKey }}
      reason="optional"
      tone="neutral"
      testId={`budget-restore-${budgetKey}`}
    />
  ) : (
    <ConfirmActionButton
      action={killBudgetAction}
      label="Kill budget"
      title={`Kill ${budgetKey}?`}
      description="The budget is set to 0: every call on every member is refused (gate budget) from the next one, until it is restored. Its value is kept for restore."
      confirmLabel="Kill budget"
      fields={{ key: budgetKey }}
      reason="optional"
      tone="danger"
      testId={`budget-kill-${budgetKey}`}
    />
  );
}

/** Archive (it charges and refuses nothing; history stays) or unarchive; a reason is required. */
// An unarchive is one of the changes change control holds for a second admin (or break glass).
export function BudgetArchiveButton({ budgetKey, archived, looser = null }: { budgetKey: string; archived: boolean; looser?: string | null }) {
  if (archived) return <AskRaiseForm kind="budget.unarchive" fields={{ key: budgetKey }} canBreakGlass what="Unarchiving puts this budget back in force" />;
  // A looser budget created in the last 24 hours over the same members would take its place: a raise.
  if (looser !== null)
    return (
      <AskRaiseForm
        kind="budget.archive"
        fields={{ key: budgetKey }}
        canBreakGlass
        what={`Budget ${looser}, created in the last 24 hours over the same members, lets more through: archiving this one`}
      />
    );
  return (
    <ConfirmActionButton
      action={archiveBudgetAction}
      label="Archive budget"
      title={`Archive ${budgetKey}?`}
      description="The budget stops counting and refusing from the next reservation; its history stays. Nothing is deleted."
      confirmLabel="Archive"
      fields={{ key: budgetKey }}
      reason="required"
      tone="danger"
      testId={`budget-archive-${budgetKey}`}
    />
  );
}

/** One billing account's own value on a per-account budget; 0 blocks that account on every member. */
export function BudgetOverrideForm({ budgetKey, min, max, currency }: { budgetKey: string; min: number; max: number; currency: string }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(setOverrideAction, IDLE);
  return (
    <form action={formAction} className="space-y-3" data-testid={`budget-override-${budgetKey}`}>
      <input type="hidden" name="key" value={budgetKey} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-caller`} className={labelClass}>
            Billing account
          </label>
          <input
            id={`${id}-caller`}
            name="caller"
            type="text"
            required
            maxLength={200}
            autoComplete="off"
            className={inputClass}
            data-testid="budget-override-caller"
          />
        </div>
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>
            Value for this account ({currency})
          </label>
          <input
            id={`${id}-value`}
            name="input"
            type="text"
            inputMode="decimal"
            required
            autoComplete="off"
            aria-describedby={`${id}-hint`}
            className={inputClass}
            data-testid="budget-override-value"
          />
        </div>
        <ReasonField id={id} />
        <OverrideEndField id={id} testId="budget-override-ends" />
      </div>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        From <Money micros={min} currency={currency} /> to <Money micros={max} currency={currency} />, clamped otherwise; 0 blocks this account on every member
        without killing the budget.
      </p>
      {/* Above what binds the account (its override, else its plan or the budget's own): a raise, asked of a second admin. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="budget.override" canBreakGlass what="An override above what binds this account, or one that ends below it, is a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…" testId="budget-override-save">
        Set override
      </SubmitButton>
      <ActionMessage state={state} testId="budget-override" />
    </form>
  );
}

/** Returns one account to the budget's own value. */
export function RemoveBudgetOverrideButton({ budgetKey, caller }: { budgetKey: string; caller: string }) {
  return (
    <ConfirmActionButton
      action={removeOverrideAction}
      label="Remove"
      title={`Remove the override of ${caller}?`}
      description={`${caller} goes back to the budget's own value from the next reservation.`}
      confirmLabel="Remove override"
      fields={{ key: budgetKey, caller }}
      reason="required"
      tone="neutral"
      testId={`budget-override-remove-${caller}`}
    />
  );
}
