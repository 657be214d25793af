"use client";

import { useActionState } from "react";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";

const revokeStaffTokenAction = runAction.bind(null, "staff_token.revoke");

export function RevokeTokenButton({ id, label }: { id: number; label: string }) {
  const [state, action, pending] = useActionState(revokeStaffTokenAction, IDLE);
  return (
    <div className="space-y-1">
      <form
        method="post"
        action={action}
        onSubmit={(event) => {
          if (!window.confirm(`Revoke ${label}? Commands run with it are refused from their next use.`)) event.preventDefault();
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
      <ActionMessage state={state} testId="token-action" />
    </div>
  );
}
