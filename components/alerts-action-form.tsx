"use client";

import { useActionState, type ReactNode } from "react";
import { IDLE, type FormAction } from "@/app/_lib/action-state";
import { ActionMessage } from "./action-message";
import { SubmitButton } from "./submit-button";

/**
 * A one-button form for an alerts server action: hidden fields, a submit button that stays
 * disabled until hydrated (an early click would GET the page instead), and the action's answer.
 */
export function AlertsActionForm(props: {
  action: FormAction;
  fields: Record<string, string | number | (string | number)[]>;
  label: ReactNode;
  pendingLabel?: string;
  confirm?: string;
  tone?: "primary" | "neutral" | "danger";
  testId?: string;
}) {
  const [state, action, pending] = useActionState(props.action, IDLE);
  const tone =
    props.tone === "danger"
      ? "border-red-300 text-red-800 hover:bg-red-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950"
      : props.tone === "primary"
        ? "border-zinc-900 bg-zinc-900 text-white hover:bg-zinc-700 dark:border-zinc-100 dark:bg-zinc-100 dark:text-zinc-900"
        : "border-zinc-300 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800";
  return (
    <form
      action={action}
      method="post"
      className="inline-flex flex-col items-start gap-1"
      onSubmit={(e) => {
        if (props.confirm && !window.confirm(props.confirm)) e.preventDefault();
      }}
    >
      {Object.entries(props.fields).flatMap(([name, value]) =>
        (Array.isArray(value) ? value : [value]).map((v, i) => <input key={`${name}-${i}`} type="hidden" name={name} value={String(v)} />),
      )}
      <SubmitButton
        pending={pending}
        pendingLabel={props.pendingLabel ?? "Saving…"}
        className={`rounded-md border px-2.5 py-1 text-xs font-medium disabled:opacity-50 ${tone}`}
        testId={props.testId}
      >
        {props.label}
      </SubmitButton>
      <ActionMessage state={state} testId={props.testId} />
    </form>
  );
}
