"use client";

import { useActionState } from "react";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";

const revokeApiKeyAction = runAction.bind(null, "api_key.revoke");

export function RevokeApiKeyButton({ id, label }: { id: number; label: string }) {
  const [state, action, pending] = useActionState(revokeApiKeyAction, IDLE);
  return (
    <div className="space-y-1">
      <form
        method="post"
        action={action}
        onSubmit={(event) => {
          if (!window.confirm(`Revoke ${label}? Services using it are refused from their next request.`)) event.preventDefault();
        }}
      >
        <input type="hidden" name="id" value={id} />
        <SubmitButton
          pending={pending}
          className="rounded-md border border-red-300 px-2 py-1 text-xs text-red-800 hover:bg-red-50 disabled:opacity-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950"
        >
          Revoke
        </SubmitButton>
      </form>
      <ActionMessage state={state} testId="api-key-action" />
    </div>
  );
}
