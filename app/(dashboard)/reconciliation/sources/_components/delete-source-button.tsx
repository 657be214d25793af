"use client";

import { useRouter } from "next/navigation";
import type { ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ConfirmActionButton } from "@/components/confirm-action-button";

// Delete, confirmed in a dialog; once deleted the page is gone, so the answer's redirect (the
// Reconciliation page) is followed.

export function DeleteSourceButton({ sourceId, name, description }: { sourceId: number; name: string; description: string }) {
  const router = useRouter();
  async function action(previous: ActionState, formData: FormData): Promise<ActionState> {
    const state = await runAction("usage_source.delete", previous, formData);
    if (state.status === "ok" && state.redirectTo) router.push(state.redirectTo);
    return state;
  }
  return (
    <ConfirmActionButton
      action={action}
      label="Delete source"
      title={`Delete ${name}?`}
      description={description}
      confirmLabel="Delete"
      fields={{ sourceId: String(sourceId) }}
      reason="optional"
      tone="danger"
      testId="delete-source"
    />
  );
}
