import type { ApiKeyActionState } from "../api-key-action-core";
import { CopySecret } from "./copy-secret";

export function ActionMessage({ state }: { state: ApiKeyActionState }) {
  if (state.status === "idle") return null;
  if (state.status === "error") {
    return (
      <p role="alert" data-testid="api-key-action-error" className="text-sm text-red-700 dark:text-red-400">
        {state.error}
      </p>
    );
  }
  return (
    <div role="status" className="space-y-2 text-sm text-emerald-800 dark:text-emerald-300">
      <p>{state.message}</p>
      {state.secret ? <CopySecret secret={state.secret} /> : null}
    </div>
  );
}
