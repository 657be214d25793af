import type { StaffActionState } from "../staff-action-core";

export function ActionMessage({ state }: { state: StaffActionState }) {
  if (state.status === "idle") return null;
  if (state.status === "error") {
    return (
      <p role="alert" data-testid="staff-action-error" className="text-sm text-red-700 dark:text-red-400">
        {state.error}
      </p>
    );
  }
  return (
    <div role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
      <p>{state.message}</p>
      {state.generatedPassword ? (
        <p className="mt-1">
          <code data-testid="generated-password" className="rounded bg-zinc-100 px-2 py-1 font-mono text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100">
            {state.generatedPassword}
          </code>
        </p>
      ) : null}
    </div>
  );
}
