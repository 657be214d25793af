import { formatCount } from "@/lib/format";

export type ActionMessageState =
  | { status: "idle" }
  | { status: "ok"; message: string }
  | { status: "error"; error: string; current?: { value: number; version: number } };

/** The typed result of a ceiling action: announced to screen readers, conflicts show the value in force. */
export function ActionMessage({ state, testId }: { state: ActionMessageState; testId?: string }) {
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
    <p role="status" data-testid={testId ? `${testId}-ok` : "action-ok"} className="text-sm text-emerald-800 dark:text-emerald-300">
      {state.message}
    </p>
  );
}
