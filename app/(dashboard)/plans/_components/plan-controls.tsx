"use client";

import { useActionState, useEffect, useId, useState } from "react";
import { useRouter } from "next/navigation";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { FieldError } from "@/app/(dashboard)/endpoints/_components/field-error";
import { ActionMessage } from "@/components/action-message";
import { AskForApproval } from "@/components/ask-approval";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { Money } from "@/components/money";
import { ReasonField } from "@/components/reason-field";
import { SubmitButton } from "@/components/submit-button";
import { dangerButtonClass, inputClass, labelClass, secondaryButtonClass } from "@/components/ui";
import { previewPlanValue, type PlanValueKind } from "@/lib/plans/preview";
import { formatCount } from "@/lib/format";

// The forms of the plans pages: a new plan, its name and description, its value on one per-caller
// ceiling or per-account budget (clamp and 5x retype shown before saving), remove a value, make
// default, delete. Each calls one server action, which checks the role itself (admin).

const createPlanAction = runAction.bind(null, "plan.create");
const updatePlanAction = runAction.bind(null, "plan.update");
const setValueAction = runAction.bind(null, "plan.value.set");
const removeValueAction = runAction.bind(null, "plan.value.remove");
const defaultAction = runAction.bind(null, "plan.default");
const deleteAction = runAction.bind(null, "plan.delete");
const keyAssignableAction = runAction.bind(null, "plan.key_assignable");
// A raise asked as a change request (lib/changes): a second admin applies it.
const askAction = runAction.bind(null, "change.request");

/** A new plan: key, name, description. It sets no values until some are set on its page. */
export function NewPlanForm() {
  const id = useId();
  const router = useRouter();
  // Controlled: a form action resets uncontrolled fields, and a refused key must not cost the rest.
  const [fields, setFields] = useState({ key: "", name: "", description: "", reason: "" });
  const bind = (name: keyof typeof fields) => ({
    name,
    value: fields[name],
    onChange: (e: { target: { value: string } }) => setFields((f) => ({ ...f, [name]: e.target.value })),
  });
  const [state, formAction, pending] = useActionState(createPlanAction, IDLE);
  useEffect(() => {
    if (state.status === "ok" && state.redirectTo) router.push(state.redirectTo);
  }, [state, router]);
  return (
    <form action={formAction} className="max-w-2xl space-y-4" data-testid="new-plan-form">
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-key`} className={labelClass}>
            Key
          </label>
          <input
            id={`${id}-key`}
            {...bind("key")}
            type="text"
            required
            maxLength={64}
            autoComplete="off"
            placeholder="pro"
            className={`${inputClass} font-mono`}
            data-testid="plan-key"
          />
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
            What the billing service sends to assign it. Lower case letters, digits, &apos;.&apos;, &apos;-&apos;, &apos;_&apos;; it never changes.
          </p>
          <FieldError state={state} name="key" />
        </div>
        <div>
          <label htmlFor={`${id}-name`} className={labelClass}>
            Name
          </label>
          <input
            id={`${id}-name`}
            {...bind("name")}
            type="text"
            required
            maxLength={120}
            autoComplete="off"
            placeholder="Pro"
            className={inputClass}
            data-testid="plan-name"
          />
          <FieldError state={state} name="name" />
        </div>
      </div>
      <div>
        <label htmlFor={`${id}-description`} className={labelClass}>
          Description (optional)
        </label>
        <textarea id={`${id}-description`} {...bind("description")} maxLength={500} rows={2} className={inputClass} data-testid="plan-description" />
        <FieldError state={state} name="description" />
      </div>
      <div>
        <label htmlFor={`${id}-reason`} className={labelClass}>
          Reason
        </label>
        <input
          id={`${id}-reason`}
          {...bind("reason")}
          type="text"
          required
          maxLength={500}
          autoComplete="off"
          className={inputClass}
          data-testid="plan-reason"
        />
      </div>
      <SubmitButton pending={pending} pendingLabel="Creating…" testId="plan-create">
        Create plan
      </SubmitButton>
      <ActionMessage state={state} testId="plan-create" />
    </form>
  );
}

/** The plan's name and description, saved against the version shown. */
export function EditPlanForm({ planKey, name, description, version }: { planKey: string; name: string; description: string; version: number }) {
  const id = useId();
  const [text, setText] = useState({ name, description });
  const [state, formAction, pending] = useActionState(updatePlanAction, IDLE);
  const shownVersion = state.status === "error" && state.currentVersion !== undefined ? state.currentVersion : version;
  return (
    <form action={formAction} className="space-y-3" data-testid="plan-edit-form">
      <input type="hidden" name="key" value={planKey} />
      <input type="hidden" name="expectedVersion" value={shownVersion} />
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-name`} className={labelClass}>
            Name
          </label>
          <input
            id={`${id}-name`}
            name="name"
            type="text"
            required
            maxLength={120}
            value={text.name}
            onChange={(e) => setText((t) => ({ ...t, name: e.target.value }))}
            className={inputClass}
            data-testid="plan-edit-name"
          />
          <FieldError state={state} name="name" />
        </div>
        <ReasonField id={id} />
      </div>
      <div>
        <label htmlFor={`${id}-description`} className={labelClass}>
          Description
        </label>
        <textarea
          id={`${id}-description`}
          name="description"
          maxLength={500}
          rows={2}
          value={text.description}
          onChange={(e) => setText((t) => ({ ...t, description: e.target.value }))}
          className={inputClass}
          data-testid="plan-edit-description"
        />
        <FieldError state={state} name="description" />
      </div>
      <SubmitButton pending={pending} pendingLabel="Saving…" className={secondaryButtonClass} testId="plan-edit-save">
        Save name and description
      </SubmitButton>
      <ActionMessage state={state} testId="plan-edit" />
    </form>
  );
}

export type PlanValueFormProps = {
  planKey: string;
  /** A per-caller ceiling by id, or a per-account budget by key. */
  target: { ceilingId: number } | { budget: string };
  of: PlanValueKind;
  planValue: number | null;
  own: number;
  ownBeforeKill: number | null;
  min: number;
  max: number;
  testId: string;
};

/** The plan's value on one ceiling or budget: what saving does is shown as it is typed. */
export function PlanValueForm(props: PlanValueFormProps) {
  const id = useId();
  const [input, setInput] = useState("");
  const [confirm, setConfirm] = useState("");
  const [state, formAction, pending] = useActionState(async (previous: ActionState, formData: FormData) => {
    const result = await setValueAction(previous, formData);
    if (result.status === "ok") {
      setInput("");
      setConfirm("");
    }
    return result;
  }, IDLE);
  const preview =
    input.trim() === ""
      ? null
      : previewPlanValue({
          raw: input,
          of: props.of,
          previous: props.planValue,
          own: props.own,
          ownBeforeKill: props.ownBeforeKill,
          min: props.min,
          max: props.max,
        });
  const needsConfirmation = (preview?.ok === true && preview.needsConfirmation) || (state.status === "error" && state.code === "confirmation_required");
  const show = (v: number) => (props.of.kind === "money" ? <Money micros={v} currency={props.of.currency} /> : formatCount(v));
  return (
    <form action={formAction} className="space-y-2" data-testid={props.testId}>
      <input type="hidden" name="key" value={props.planKey} />
      {"ceilingId" in props.target ? (
        <input type="hidden" name="ceilingId" value={props.target.ceilingId} />
      ) : (
        <input type="hidden" name="budget" value={props.target.budget} />
      )}
      <div className="grid gap-2 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>
            Plan value{props.of.kind === "money" ? ` (${props.of.currency})` : ""}
          </label>
          <input
            id={`${id}-value`}
            name="input"
            type="text"
            inputMode={props.of.kind === "money" ? "decimal" : "numeric"}
            autoComplete="off"
            required
            value={input}
            onChange={(e) => setInput(e.target.value)}
            aria-describedby={`${id}-preview`}
            className={inputClass}
            data-testid={`${props.testId}-value`}
          />
        </div>
        <ReasonField id={id} testId={`${props.testId}-reason`} />
      </div>
      <p
        id={`${id}-preview`}
        aria-live="polite"
        className={`text-xs ${preview?.ok === false ? "text-red-700 dark:text-red-400" : "text-zinc-600 dark:text-zinc-400"}`}
        data-testid={`${props.testId}-preview`}
      >
        {preview === null ? (
          <>
            From {show(props.min)} to {show(props.max)}, clamped otherwise; 0 refuses every account on this plan here.
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
            autoComplete="off"
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            className={inputClass}
            data-testid={`${props.testId}-confirm`}
          />
        </div>
      ) : null}
      {/* Above what binds the plan's accounts now: a raise, asked of a second admin. */}
      {state.status === "error" && state.code === "approval_required" ? (
        <AskForApproval kind="plan.value" canBreakGlass hasConfirm={needsConfirmation} what="A plan value above the one in force is a raise" />
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Saving…" className={secondaryButtonClass} testId={`${props.testId}-save`}>
        Set value
      </SubmitButton>
      <ActionMessage state={state} testId={props.testId} />
    </form>
  );
}

/** Asks a second admin for a raise the direct button refused (approval_required): the removal, the default switch, the key flag. */
export function AskPlanButton({
  kind,
  planKey,
  extra = {},
  label,
  title,
  description,
  testId,
}: {
  kind: "plan.value" | "plan.default" | "plan.key_assignable";
  planKey: string;
  extra?: Record<string, string>;
  label: string;
  title: string;
  description: string;
  testId: string;
}) {
  return (
    <ConfirmActionButton
      action={askAction}
      label={label}
      title={title}
      description={`${description} A second admin must approve it within 24 hours; approvers are alerted.`}
      confirmLabel="Ask for approval"
      fields={{ kind, key: planKey, ...extra }}
      reason="required"
      tone="neutral"
      testId={testId}
    />
  );
}

/** Whether API keys may move accounts onto this plan, looser or not: marking asks two admins, unmarking is one person's. */
export function KeyAssignableControl({ planKey, keyAssignable }: { planKey: string; keyAssignable: boolean }) {
  if (!keyAssignable) {
    return (
      <AskPlanButton
        kind="plan.key_assignable"
        planKey={planKey}
        label="Ask to allow keys"
        title={`Let API keys move accounts onto ${planKey}?`}
        description={`Any API key with accounts:write may then move any account onto ${planKey} without a second admin, even when that raises what the account may spend.`}
        testId={`plan-key-assignable-${planKey}`}
      />
    );
  }
  return (
    <ConfirmActionButton
      action={keyAssignableAction}
      label="Stop keys assigning"
      title={`Stop API keys moving accounts onto ${planKey}?`}
      description="A key's move onto this plan is refused again whenever it loosens the account; accounts already on it stay."
      confirmLabel="Stop"
      fields={{ key: planKey, assignable: "false" }}
      reason="required"
      tone="neutral"
      testId={`plan-key-unassignable-${planKey}`}
    />
  );
}

/** Removes the plan's value: its accounts get the ceiling's or budget's own again. */
export function RemovePlanValueButton({
  planKey,
  target,
  on,
  testId,
}: {
  planKey: string;
  target: { ceilingId: number } | { budget: string };
  on: string;
  testId: string;
}) {
  const fields: Record<string, string> =
    "ceilingId" in target ? { key: planKey, ceilingId: String(target.ceilingId) } : { key: planKey, budget: target.budget };
  return (
    <ConfirmActionButton
      action={removeValueAction}
      label="Remove"
      title={`Remove ${planKey}'s value on ${on}?`}
      description={`Every account on ${planKey} without an override gets ${on}'s own value from the next reservation.`}
      confirmLabel="Remove value"
      fields={fields}
      reason="required"
      tone="neutral"
      testId={testId}
    />
  );
}

export function MakeDefaultButton({ planKey }: { planKey: string }) {
  return (
    <ConfirmActionButton
      action={defaultAction}
      label="Make default"
      title={`Make ${planKey} the default plan?`}
      description={`Every account not assigned a plan moves to ${planKey}'s values from the next reservation. Accounts assigned a plan stay on theirs.`}
      confirmLabel="Make default"
      fields={{ key: planKey }}
      reason="required"
      tone="neutral"
      testId={`plan-default-${planKey}`}
    />
  );
}

/**
 * Deletes the plan: a form of its own (a reason, then the button) rather than a dialog, so that
 * once the plan is gone the person lands on the plans list instead of a page that no longer exists.
 */
export function DeletePlanForm({ planKey }: { planKey: string }) {
  const id = useId();
  const router = useRouter();
  // Navigates away as soon as the delete answers: the page it was on re-renders as "not found".
  const [state, formAction, pending] = useActionState(async (previous: ActionState, formData: FormData) => {
    const result = await deleteAction(previous, formData);
    if (result.status === "ok" && result.redirectTo) router.push(result.redirectTo);
    return result;
  }, IDLE);
  return (
    <form action={formAction} className="space-y-2" data-testid={`plan-delete-${planKey}`}>
      <input type="hidden" name="key" value={planKey} />
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        The plan and its values are deleted; the audit log keeps what they were. Only a plan no account is on, and not the default.
      </p>
      <ReasonField id={id} testId={`plan-delete-${planKey}-reason`} />
      <SubmitButton pending={pending} pendingLabel="Deleting…" className={dangerButtonClass} testId={`plan-delete-${planKey}-save`}>
        Delete plan
      </SubmitButton>
      <ActionMessage state={state} testId={`plan-delete-${planKey}`} />
    </form>
  );
}
