"use client";

import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { useActionState, useId, useState } from "react";
import { ActionMessage } from "@/components/action-message";
import { inputClass, labelClass } from "@/components/ui";
import { parseLimitInput, previewAdjustment } from "@/lib/limits/parse";
import { WhatIfPanel } from "@/components/what-if-panel";
import { runAction } from "@/app/(dashboard)/actions";
import { SubmitButton } from "@/components/submit-button";
import { ReasonField } from "@/components/reason-field";
import { formatCount } from "@/lib/format";
import { isValueRaise } from "@/lib/control/raise";
import { AskForApproval } from "@/components/ask-approval";

const adjustCeilingAction = runAction.bind(null, "ceiling.adjust");

type AdjustFormProps = {
  ceilingId: number;
  value: number;
  valueBeforeKill: number | null;
  min: number;
  max: number;
  defaultValue: number;
  version: number;
  /** What the value counts ("calls", "emails"), for the what-if panel. */
  unit?: string;
  /** Admins save a lower value and may break glass; operators reach the form only to ask for a raise. */
  isAdmin: boolean;
};

/**
 * Shows what a value will do before it is saved (clamp, kill, restore, 5x raise), asks for the
 * value again on a big raise, turns a raise into a request for a second admin, and keeps the version it was drawn from so a concurrent save by
 * someone else comes back as a conflict instead of being overwritten.
 */
export function AdjustForm(props: AdjustFormProps) {
  const id = useId();
  const [input, setInput] = useState("");
  const [confirm, setConfirm] = useState("");
  const [state, formAction, pending] = useActionState(async (previous: ActionState, formData: FormData) => {
    const result = await adjustCeilingAction(previous, formData);
    if (result.status === "ok") {
      setInput("");
      setConfirm("");
    }
    return result;
  }, IDLE);

  // After a conflict the form carries the version now in force: the next save is an informed one.
  const conflict = state.status === "error" ? state.current : undefined;
  const version = conflict?.version ?? props.version;
  const current = conflict?.value ?? props.value;
  const preview =
    input.trim() === "" ? null : previewAdjustment({ raw: input, current, valueBeforeKill: props.valueBeforeKill, min: props.min, max: props.max });
  const needsConfirmation = preview?.ok === true && preview.needsConfirmation;
  // A lower value (not a kill) shows what it would have refused over the last 30 days.
  const typed = input.trim() === "" ? null : parseLimitInput(input);
  const lower = typed?.ok === true && typed.value > 0 && typed.value < current ? typed.value : null;
  // A raise is asked, not saved; the server says so too (approval_required) if the browser misjudged it.
  const raise =
    (preview?.ok === true && isValueRaise({ value: current, valueBeforeKill: props.valueBeforeKill, defaultValue: props.defaultValue }, preview.applied)) ||
    (state.status === "error" && state.code === "approval_required");

  return (
    <form action={formAction} className="space-y-3" data-testid={`adjust-form-${props.ceilingId}`}>
      <input type="hidden" name="ceilingId" value={props.ceilingId} />
      <input type="hidden" name="expectedVersion" value={version} />
      <div className="grid gap-3 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-value`} className={labelClass}>
            New value
          </label>
          <input
            id={`${id}-value`}
            name="input"
            type="text"
            inputMode="numeric"
            autoComplete="off"
            value={input}
            onChange={(e) => setInput(e.target.value)}
            aria-describedby={`${id}-preview`}
            className={inputClass}
            data-testid="adjust-value"
          />
        </div>
        <ReasonField id={id} testId="adjust-reason" />
      </div>
      <p
        id={`${id}-preview`}
        aria-live="polite"
        data-testid="adjust-preview"
        className={`text-sm ${preview?.ok === false ? "text-red-700 dark:text-red-400" : "text-zinc-700 dark:text-zinc-300"}`}
      >
        {preview === null
          ? `Whole numbers only, from ${formatCount(props.min)} to ${formatCount(props.max)}; 0 kills this ceiling.`
          : preview.ok
            ? preview.message
            : preview.error}
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
            inputMode="numeric"
            autoComplete="off"
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            className={inputClass}
            data-testid="adjust-confirm"
          />
        </div>
      ) : null}
      <WhatIfPanel fields={{ target: "ceiling", ceilingId: String(props.ceilingId) }} value={lower} unit={props.unit ?? "units"} />
      {raise ? (
        <AskForApproval kind="ceiling.value" canBreakGlass={props.isAdmin} hasConfirm={needsConfirmation} />
      ) : props.isAdmin ? (
        <SubmitButton pending={pending} pendingLabel="Saving…" testId="adjust-save">
          Save value
        </SubmitButton>
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="adjust-operator-note">
          Operators ask for a raise here; an admin lowers a value, and anyone on call can kill.
        </p>
      )}
      <ActionMessage state={state} testId="adjust" />
    </form>
  );
}
