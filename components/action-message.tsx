import Link from "next/link";
import type { ActionState } from "@/app/_lib/action-state";
import { formatCount } from "@/lib/format";
import { CopySecret } from "./copy-secret";

/**
 * The answer of a server action, for every form: announced to screen readers; a conflict shows the
 * value in force; a credential made by the action is shown once, to copy.
 */
export function ActionMessage({ state, testId, secretTestId = "shown-once-secret" }: { state: ActionState; testId?: string; secretTestId?: string }) {
  if (state.status === "idle") return null;
  if (state.status === "error") {
    return (
      <div role="alert" data-testid={testId ? `${testId}-error` : "action-error"} className="text-sm text-red-700 dark:text-red-400">
        <p>{state.error}</p>
        {state.current ? (
          <p className="mt-1 font-medium" data-testid="conflict-current">
            Value in force now: {formatCount(state.current.value)}. The form now holds the latest version; check it and save again if you still mean it.
          </p>
        ) : null}
      </div>
    );
  }
  return (
    <div role="status" data-testid={testId ? `${testId}-ok` : "action-ok"} className="space-y-2 text-sm text-emerald-800 dark:text-emerald-300">
      <p>{state.message}</p>
      {state.link ? (
        <p>
          <Link href={state.link.href} className="font-medium underline underline-offset-2" data-testid={testId ? `${testId}-link` : "action-link"}>
            {state.link.label}
          </Link>
        </p>
      ) : null}
      {state.secret ? <CopySecret secret={state.secret} testId={secretTestId} /> : null}
    </div>
  );
}
