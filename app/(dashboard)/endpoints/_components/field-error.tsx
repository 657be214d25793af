import type { ActionState } from "@/app/_lib/action-state";

/** The message for one field, next to it, from the action's per-field errors. */
export function FieldError({ state, name }: { state: ActionState; name: string }) {
  if (state.status !== "error") return null;
  const message = state.fieldErrors?.[name];
  if (!message) return null;
  return (
    <p className="mt-1 text-xs text-red-700 dark:text-red-400" data-testid={`field-error-${name}`}>
      {message}
    </p>
  );
}
