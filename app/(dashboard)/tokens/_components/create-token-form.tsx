"use client";

import { useActionState } from "react";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";

const createStaffTokenAction = runAction.bind(null, "staff_token.create");

export function CreateTokenForm() {
  const [state, action, pending] = useActionState(createStaffTokenAction, IDLE);
  return (
    <form method="post" action={action} className="max-w-2xl space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
      <h2 className="text-lg font-semibold">Create a personal token</h2>
      <div>
        <label htmlFor="token-name" className="block text-sm font-medium">
          Name
        </label>
        <input
          id="token-name"
          name="name"
          type="text"
          required
          maxLength={100}
          placeholder="work laptop"
          className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950"
        />
      </div>
      <SubmitButton pending={pending} pendingLabel="Creating…">
        Create token
      </SubmitButton>
      <ActionMessage state={state} testId="token-action" secretTestId="token-secret" />
    </form>
  );
}
