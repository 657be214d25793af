"use client";

import { useActionState, useId } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "@/components/action-message";
import { AskForApproval } from "@/components/ask-approval";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";

// The account page's write side: block (operators), unblock and change plan (admins). Each calls
// one server action, which checks the role itself; the page only leaves out what the role cannot do.

const blockAction = runAction.bind(null, "account.block");
// An unblock is a raise: always asked of a second admin (lib/changes, account.unblock).
const askAction = runAction.bind(null, "change.request");
const assignPlanAction = runAction.bind(null, "account.assign_plan");

export function BlockAccountButton({ account }: { account: string }) {
  return (
    <ConfirmActionButton
      action={blockAction}
      label="Block account"
      title={`Block ${account}?`}
      description="Every call naming this account is refused on every endpoint (gate blocked), including endpoints made later, from the next one. Its plan, overrides and counters stay as they are; only an admin can unblock it."
      confirmLabel="Block account"
      fields={{ account }}
      reason="required"
      tone="danger"
      testId="account-block"
    />
  );
}

export function UnblockAccountButton({ account }: { account: string }) {
  return (
    <ConfirmActionButton
      action={askAction}
      label="Ask to unblock"
      title={`Ask to unblock ${account}?`}
      description="Unblocking lets the account spend again on every endpoint: a second admin must approve it (within 24 hours; approvers are alerted). Once approved, the account is decided again from its next call by its plan, its overrides and what it already used."
      confirmLabel="Ask for approval"
      fields={{ kind: "account.unblock", account }}
      reason="required"
      tone="neutral"
      testId="account-unblock"
    />
  );
}

export type PlanChoice = { key: string; name: string; isDefault: boolean };

/** Moves the account to another plan; the current one is preselected and cannot be saved unchanged. */
export function ChangePlanForm({ account, current, plans }: { account: string; current: string | null; plans: PlanChoice[] }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(assignPlanAction, IDLE);
  return (
    <form action={formAction} className="space-y-3" data-testid="account-change-plan">
      <input type="hidden" name="account" value={account} />
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-plan`} className={labelClass}>
            Plan
          </label>
          <select id={`${id}-plan`} name="plan" defaultValue={current ?? ""} required className={inputClass} data-testid="account-plan-select">
            {plans.map((p) => (
              <option key={p.key} value={p.key}>
                {p.name} ({p.key}){p.isDefault ? ", the default" : ""}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-reason`} className={labelClass}>
            Reason (optional)
          </label>
          <input id={`${id}-reason`} name="reason" type="text" maxLength={500} autoComplete="off" className={inputClass} data-testid="account-plan-reason" />
        </div>
      </div>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        The new plan binds the next reservation; what the account used in the open windows stays counted (an upgrade mid-day gives the new value minus what was
        used).
      </p>
      {/* A looser plan (the database's reading) is a raise: the server answers approval_required, then it can be asked. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="account.plan" canBreakGlass what="Moving this account to a looser plan is a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…" testId="account-plan-save">
        Change plan
      </SubmitButton>
      <ActionMessage state={state} testId="account-plan" />
    </form>
  );
}
