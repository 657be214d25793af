"use client";

import type { ReactNode } from "react";
import { buttonClass } from "./ui";
import { useHydrated } from "./use-hydrated";

/**
 * A form's submit button: disabled until hydrated (an early click would post the form without its
 * action) and while the action runs, when it says what it is doing.
 */
export function SubmitButton(props: { pending: boolean; pendingLabel?: string; className?: string; testId?: string; children: ReactNode }) {
  const hydrated = useHydrated();
  return (
    <button type="submit" disabled={!hydrated || props.pending} className={props.className ?? buttonClass} data-testid={props.testId}>
      {props.pending && props.pendingLabel ? props.pendingLabel : props.children}
    </button>
  );
}
