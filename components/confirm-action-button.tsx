"use client";

import { useActionState, useEffect, useId, useRef, useState } from "react";
import { IDLE, type FormAction } from "@/app/_lib/action-state";
import { ActionMessage } from "./action-message";
import { useHydrated } from "./use-hydrated";
import { buttonClass, dangerButtonClass, inputClass, labelClass, secondaryButtonClass } from "./ui";

type ConfirmActionButtonProps = {
  action: FormAction;
  /** Text of the button that opens the confirmation. */
  label: string;
  title: string;
  description: string;
  confirmLabel: string;
  fields: Record<string, string>;
  reason: "required" | "optional";
  tone: "danger" | "neutral";
  testId: string;
};

/**
 * One click opens a native modal dialog (focus moves in, Escape closes, the page behind is inert);
 * a second, deliberate click confirms. Used for kill, restore and kill all. The dialog is built on
 * the first click, not sent with the page: the overview carries one per endpoint, and 50 unopened
 * dialogs were a sixth of every refresh (the button works only once hydrated either way).
 */
export function ConfirmActionButton(props: ConfirmActionButtonProps) {
  const [state, formAction, pending] = useActionState(props.action, IDLE);
  const dialogRef = useRef<HTMLDialogElement>(null);
  const hydrated = useHydrated();
  const id = useId();

  const [built, setBuilt] = useState(false);

  useEffect(() => {
    if (state.status === "ok") dialogRef.current?.close();
  }, [state]);

  // Built by the first click: open it once it is in the page.
  useEffect(() => {
    if (built) dialogRef.current?.showModal();
  }, [built]);

  const openClass = props.tone === "danger" ? dangerButtonClass : secondaryButtonClass;
  return (
    <div className="inline-flex flex-col items-start gap-1">
      <button
        type="button"
        className={openClass}
        disabled={!hydrated}
        data-testid={props.testId}
        onClick={() => (built ? dialogRef.current?.showModal() : setBuilt(true))}
      >
        {props.label}
      </button>
      {state.status === "ok" ? <ActionMessage state={state} testId={props.testId} /> : null}
      {built ? (
        <dialog
          ref={dialogRef}
          aria-labelledby={`${id}-title`}
          aria-describedby={`${id}-desc`}
          className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg border border-zinc-300 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-black/50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
        >
          <form action={formAction} className="space-y-4 p-5">
            <h2 id={`${id}-title`} className="text-lg font-semibold">
              {props.title}
            </h2>
            <p id={`${id}-desc`} className="text-sm text-zinc-700 dark:text-zinc-300">
              {props.description}
            </p>
            {Object.entries(props.fields).map(([name, value]) => (
              <input key={name} type="hidden" name={name} value={value} />
            ))}
            <div>
              <label htmlFor={`${id}-reason`} className={labelClass}>
                Reason{props.reason === "optional" ? " (optional)" : ""}
              </label>
              <input
                id={`${id}-reason`}
                name="reason"
                type="text"
                maxLength={500}
                required={props.reason === "required"}
                autoComplete="off"
                className={inputClass}
                data-testid={`${props.testId}-reason`}
              />
            </div>
            {state.status === "error" ? <ActionMessage state={state} testId={props.testId} /> : null}
            <div className="flex flex-wrap justify-end gap-2">
              <button type="button" className={secondaryButtonClass} onClick={() => dialogRef.current?.close()}>
                Cancel
              </button>
              <button
                type="submit"
                disabled={pending}
                className={props.tone === "danger" ? dangerButtonClass : buttonClass}
                data-testid={`${props.testId}-confirm`}
              >
                {pending ? "Working…" : props.confirmLabel}
              </button>
            </div>
          </form>
        </dialog>
      ) : null}
    </div>
  );
}
