"use client";

import { useActionState } from "react";
import { roles } from "@/lib/auth/roles";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";

const addStaffAction = runAction.bind(null, "staff.add");

const input = "mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950";

export function AddStaffForm() {
  const [state, action, pending] = useActionState(addStaffAction, IDLE);
  return (
    <form action={action} className="max-w-xl space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
      <h2 className="text-lg font-semibold">Add a staff member</h2>
      <div className="grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="add-email" className="block text-sm font-medium">
            Email
          </label>
          <input id="add-email" name="email" type="email" required className={input} />
        </div>
        <div>
          <label htmlFor="add-name" className="block text-sm font-medium">
            Name (optional)
          </label>
          <input id="add-name" name="name" type="text" maxLength={200} className={input} />
        </div>
        <div>
          <label htmlFor="add-role" className="block text-sm font-medium">
            Role
          </label>
          <select id="add-role" name="role" defaultValue="viewer" className={input}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="add-password" className="block text-sm font-medium">
            Password (blank: generate one)
          </label>
          <input id="add-password" name="password" type="password" autoComplete="new-password" minLength={12} className={input} />
        </div>
      </div>
      <button
        type="submit"
        disabled={pending}
        className="rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white hover:bg-zinc-700 disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900"
      >
        {pending ? "Adding…" : "Add staff member"}
      </button>
      <ActionMessage state={state} testId="staff-action" secretTestId="generated-password" />
    </form>
  );
}
