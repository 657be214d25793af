"use client";

import { WhatIfPanel } from "@/components/what-if-panel";
import { useActionState, useEffect, useId, useState } from "react";
import { useRouter } from "next/navigation";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { FieldError } from "@/app/(dashboard)/endpoints/_components/field-error";
import { ActionMessage } from "@/components/action-message";
import { AskForApproval } from "@/components/ask-approval";
import { ReasonField } from "@/components/reason-field";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";
import { parseMoneyInput } from "@/lib/limits/parse";
import { budgetSentence } from "@/lib/budgets/money";
import { BUDGET_SCOPES, BUDGET_WINDOWS } from "@/lib/vocabulary";

// The new-budget and edit-budget forms. Money is typed in the currency's units ("200", "1.50");
// the worst case is stated as it is typed, and every error comes back next to its field.

const createBudgetAction = runAction.bind(null, "budget.create");
const askKindOf = (state: ActionState) => (state.status === "error" && state.code === "approval_required" ? state.askKind : undefined);
const updateBudgetAction = runAction.bind(null, "budget.update");

/** An endpoint a budget may count: live ones join; an archived one only stays if it is a member. */
export type MemberOption = { key: string; name: string; currency: string; archived: boolean };

export type BudgetFieldsText = { name: string; members: string[]; min: string; max: string; default: string; alertThresholds: string };
export type BudgetSpecText = BudgetFieldsText & { key: string; currency: string; scope: string; window: string; billingDay: string; value: string };

export const emptyBudget: BudgetSpecText = {
  key: "",
  name: "",
  currency: "USD",
  scope: "global",
  window: "utc_day",
  billingDay: "1",
  value: "",
  min: "0",
  max: "",
  default: "",
  alertThresholds: "50, 80, 100",
  members: [],
};

function MemberPicker({
  options,
  value,
  currency,
  onChange,
  state,
  initial,
}: {
  options: MemberOption[];
  value: string[];
  currency: string;
  onChange: (v: string[]) => void;
  state: ActionState;
  initial: string[];
}) {
  const memberError = state.status === "error" ? Object.entries(state.fieldErrors ?? {}).filter(([k]) => k === "members" || k.startsWith("members[")) : [];
  const shown = options.filter((o) => !o.archived || initial.includes(o.key));
  return (
    <fieldset className="space-y-1 sm:col-span-2">
      <legend className={labelClass}>Members</legend>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        The endpoints this budget counts, each named: a new endpoint never joins a budget by itself, so its worst case changes only when it is edited. One
        currency per budget.
      </p>
      <input type="hidden" name="members" value={value.join(",")} />
      <ul className="grid max-h-64 gap-1 overflow-y-auto sm:grid-cols-2" data-testid="budget-members">
        {shown.map((o) => {
          const other = o.currency !== currency;
          return (
            <li key={o.key}>
              <label className={`flex items-center gap-2 text-sm ${other ? "text-zinc-500" : ""}`}>
                <input
                  type="checkbox"
                  checked={value.includes(o.key)}
                  disabled={other && !value.includes(o.key)}
                  onChange={(e) => onChange(e.target.checked ? [...value, o.key] : value.filter((k) => k !== o.key))}
                  data-testid={`member-${o.key}`}
                />
                <span className="font-mono">{o.key}</span>
                <span className="truncate text-xs text-zinc-600 dark:text-zinc-400">
                  {o.name}
                  {other ? ` · priced in ${o.currency}` : ""}
                  {o.archived ? " · archived" : ""}
                </span>
              </label>
            </li>
          );
        })}
      </ul>
      {memberError.map(([k, message]) => (
        <p key={k} className="text-xs text-red-700 dark:text-red-400" data-testid={`field-error-${k}`}>
          {message}
        </p>
      ))}
    </fieldset>
  );
}

function MoneyInput({
  name,
  label,
  value,
  onChange,
  currency,
  state,
  hint,
}: {
  name: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  currency: string;
  state: ActionState;
  hint?: string;
}) {
  const id = useId();
  const parsed = value.trim() === "" ? null : parseMoneyInput(value, label);
  return (
    <div>
      <label htmlFor={id} className={labelClass}>
        {label} ({currency || "USD"})
      </label>
      <input
        id={id}
        name={name}
        type="text"
        inputMode="decimal"
        autoComplete="off"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className={inputClass}
        data-testid={`budget-${name}`}
      />
      {parsed && !parsed.ok ? (
        <p className="text-xs text-red-700 dark:text-red-400">{parsed.error}</p>
      ) : hint ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">{hint}</p>
      ) : null}
      <FieldError state={state} name={name} />
    </div>
  );
}

function sentenceOf(v: BudgetSpecText, value: string): string | null {
  const money = parseMoneyInput(value, "value");
  if (!money.ok || v.members.length === 0) return null;
  if (!(BUDGET_SCOPES as readonly string[]).includes(v.scope) || !(BUDGET_WINDOWS as readonly string[]).includes(v.window)) return null;
  return budgetSentence({
    scope: v.scope as "global",
    window: v.window as "utc_day",
    billingDay: Number(v.billingDay) || 1,
    value: money.micros,
    currency: v.currency || "USD",
    members: [...v.members].sort(),
  });
}

function CommonFields({
  v,
  set,
  state,
  options,
  initialMembers,
}: {
  v: BudgetSpecText;
  set: (patch: Partial<BudgetSpecText>) => void;
  state: ActionState;
  options: MemberOption[];
  initialMembers: string[];
}) {
  const id = useId();
  return (
    <>
      <div>
        <label htmlFor={`${id}-name`} className={labelClass}>
          Name
        </label>
        <input
          id={`${id}-name`}
          name="name"
          type="text"
          maxLength={120}
          autoComplete="off"
          value={v.name}
          onChange={(e) => set({ name: e.target.value })}
          className={inputClass}
          data-testid="budget-name"
        />
        <FieldError state={state} name="name" />
      </div>
      <div>
        <label htmlFor={`${id}-alerts`} className={labelClass}>
          Alerts at %
        </label>
        <input
          id={`${id}-alerts`}
          name="alertThresholds"
          type="text"
          autoComplete="off"
          value={v.alertThresholds}
          onChange={(e) => set({ alertThresholds: e.target.value })}
          className={inputClass}
        />
        <FieldError state={state} name="alertThresholds" />
      </div>
      <MoneyInput
        name="min"
        label="Minimum"
        value={v.min}
        onChange={(min) => set({ min })}
        currency={v.currency}
        state={state}
        hint="The lowest value it may be set to (0 stays allowed: the kill switch)"
      />
      <MoneyInput
        name="max"
        label="Maximum"
        value={v.max}
        onChange={(max) => set({ max })}
        currency={v.currency}
        state={state}
        hint="The highest value it may be set to; more is clamped"
      />
      <MoneyInput name="default" label="Default" value={v.default} onChange={(d) => set({ default: d })} currency={v.currency} state={state} />
      <MemberPicker
        options={options}
        value={v.members}
        currency={v.currency || "USD"}
        onChange={(members) => set({ members })}
        state={state}
        initial={initialMembers}
      />
    </>
  );
}

function useRedirect(state: ActionState) {
  const router = useRouter();
  useEffect(() => {
    if (state.status === "ok" && state.redirectTo) router.push(state.redirectTo);
  }, [state, router]);
}

/** The new-budget form: key, scope, window and currency are chosen once; value and bounds in money. */
/** The typed value in micros when the what-if can replay it: a value above 0 and at least one member. */
function newBudgetValue(v: BudgetSpecText): number | null {
  const money = parseMoneyInput(v.value, "value");
  return money.ok && money.micros > 0 && v.members.length > 0 ? money.micros : null;
}

export function NewBudgetForm({ options }: { options: MemberOption[] }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(createBudgetAction, IDLE);
  const [v, setV] = useState<BudgetSpecText>(emptyBudget);
  const set = (patch: Partial<BudgetSpecText>) => setV((old) => ({ ...old, ...patch }));
  useRedirect(state);
  const sentence = sentenceOf(v, v.value);
  const select = (name: "scope" | "window", label: string, choices: readonly string[], words: Record<string, string>) => (
    <div>
      <label htmlFor={`${id}-${name}`} className={labelClass}>
        {label}
      </label>
      <select
        id={`${id}-${name}`}
        name={name}
        value={v[name]}
        onChange={(e) => set({ [name]: e.target.value })}
        className={inputClass}
        data-testid={`budget-${name}`}
      >
        {choices.map((c) => (
          <option key={c} value={c}>
            {words[c] ?? c}
          </option>
        ))}
      </select>
      <FieldError state={state} name={name} />
    </div>
  );
  return (
    <form action={formAction} className="space-y-4" data-testid="new-budget-form">
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-key`} className={labelClass}>
            Key
          </label>
          <input
            id={`${id}-key`}
            name="key"
            type="text"
            maxLength={64}
            autoComplete="off"
            value={v.key}
            onChange={(e) => set({ key: e.target.value })}
            className={`${inputClass} font-mono`}
            data-testid="budget-key"
          />
          <p className="text-xs text-zinc-600 dark:text-zinc-400">Like llm.daily; it never changes</p>
          <FieldError state={state} name="key" />
        </div>
        <div>
          <label htmlFor={`${id}-currency`} className={labelClass}>
            Currency
          </label>
          <input
            id={`${id}-currency`}
            name="currency"
            type="text"
            maxLength={3}
            autoComplete="off"
            value={v.currency}
            onChange={(e) => set({ currency: e.target.value.toUpperCase(), members: [] })}
            className={inputClass}
          />
          <FieldError state={state} name="currency" />
        </div>
        {select("scope", "Scope", BUDGET_SCOPES, { global: "Global: everyone together", account: "Per account: each billing account its own" })}
        {select("window", "Window", BUDGET_WINDOWS, { utc_day: "UTC day", billing_month: "Billing month" })}
        {v.window === "billing_month" ? (
          <div>
            <label htmlFor={`${id}-day`} className={labelClass}>
              Billing day (1-28)
            </label>
            <input
              id={`${id}-day`}
              name="billingDay"
              type="text"
              inputMode="numeric"
              autoComplete="off"
              value={v.billingDay}
              onChange={(e) => set({ billingDay: e.target.value })}
              className={inputClass}
            />
            <FieldError state={state} name="billingDay" />
          </div>
        ) : (
          <input type="hidden" name="billingDay" value="1" />
        )}
        <MoneyInput
          name="value"
          label="Value"
          value={v.value}
          onChange={(value) => set({ value })}
          currency={v.currency}
          state={state}
          hint="0 creates it killed"
        />
        <CommonFields v={v} set={set} state={state} options={options} initialMembers={[]} />
      </div>
      <p className="text-sm font-medium" aria-live="polite" data-testid="budget-sentence">
        {sentence ? `Guarantee: ${sentence}.` : "Choose members and a value to see what the budget guarantees."}
      </p>
      {/* What the new budget would have refused on its members' history ("no history" when they have none). */}
      <WhatIfPanel
        fields={{
          target: "new-budget",
          scope: v.scope,
          window: v.window,
          billingDay: v.window === "billing_month" ? v.billingDay.trim() : "1",
          members: [...v.members].sort().join(","),
        }}
        value={newBudgetValue(v)}
        unit="money"
        currency={v.currency || "USD"}
      />
      <ReasonField id={id} />
      {/* Above its default, or looser than a budget archived in the last 24 hours over the same members: a raise. */}
      {askKindOf(state) === "budget.create" ? <AskForApproval kind="budget.create" canBreakGlass what="This new budget is a raise" /> : null}
      <SubmitButton pending={pending} pendingLabel="Creating…" testId="create-budget">
        Create budget
      </SubmitButton>
      <ActionMessage state={state} testId="create-budget" />
    </form>
  );
}

export type EditBudgetInitial = BudgetSpecText & { version: number; valueMicros: number };

/**
 * The edit form: name, members, bounds, default and alerts (the value is changed on its own, with
 * its clamp and retype: AdjustBudgetForm). It keeps the version it was drawn from, so a save by
 * someone else in between comes back as a conflict.
 */
export function EditBudgetForm({ initial, options }: { initial: EditBudgetInitial; options: MemberOption[] }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(updateBudgetAction, IDLE);
  const [v, setV] = useState<BudgetSpecText>(initial);
  const set = (patch: Partial<BudgetSpecText>) => setV((old) => ({ ...old, ...patch }));
  const expected = state.status === "error" && state.currentVersion !== undefined ? state.currentVersion : initial.version;
  const before = sentenceOf(initial, initial.value);
  const after = sentenceOf(v, v.value);
  return (
    <form action={formAction} className="space-y-4" data-testid="edit-budget-form">
      <input type="hidden" name="key" value={initial.key} />
      <input type="hidden" name="expectedVersion" value={expected} />
      <div className="grid gap-3 sm:grid-cols-2">
        <CommonFields v={v} set={set} state={state} options={options} initialMembers={initial.members} />
      </div>
      <p className="text-sm" aria-live="polite" data-testid="budget-sentence">
        {before && after && before !== after ? (
          <>
            Worst case: {before} → <span className="font-medium">{after}</span>
          </>
        ) : (
          `Worst case: ${after ?? before ?? "choose at least one member"}`
        )}
      </p>
      <ReasonField id={id} />
      {/* A member removed: its calls stop counting against the budget, a raise (asked alone: save the other fields without it). */}
      {askKindOf(state) === "budget.members" ? <AskForApproval kind="budget.members" canBreakGlass what="Removing a member is a raise" /> : null}
      <SubmitButton pending={pending} pendingLabel="Saving…" testId="save-budget">
        Save budget
      </SubmitButton>
      <ActionMessage state={state} testId="save-budget" />
    </form>
  );
}
