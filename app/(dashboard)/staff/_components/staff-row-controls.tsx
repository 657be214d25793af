"use client";

import { useActionState } from "react";
import { roles, type Role } from "@/lib/auth/roles";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";

const changeStaffRoleAction = runAction.bind(null, "staff.role");
const setStaffDisabledAction = runAction.bind(null, "staff.disable");

const button = "rounded-md border border-zinc-300 px-2 py-1 text-xs hover:bg-zinc-100 disabled:opacity-50 dark:border-zinc-700 dark:hover:bg-zinc-800";

export function StaffRowControls({ email, role, disabled }: { email: string; role: Role; disabled: boolean }) {
  const [roleState, roleAction, rolePending] = useActionState(changeStaffRoleAction, IDLE);
  const [accessState, accessAction, accessPending] = useActionState(setStaffDisabledAction, IDLE);
  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center gap-2">
        <form action={roleAction} className="flex items-center gap-2">
          <input type="hidden" name="email" value={email} />
          <label className="sr-only" htmlFor={`role-${email}`}>
            Role of {email}
          </label>
          <select
            id={`role-${email}`}
            name="role"
            defaultValue={role}
            className="rounded-md border border-zinc-300 bg-white px-2 py-1 text-xs dark:border-zinc-700 dark:bg-zinc-950"
          >
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button type="submit" disabled={rolePending} className={button}>
            Change role
          </button>
        </form>
        <form
          action={accessAction}
          onSubmit={(event) => {
            if (!disabled && !window.confirm(`Disable ${email}? Their open sessions end at once.`)) event.preventDefault();
          }}
        >
          <input type="hidden" name="email" value={email} />
          <input type="hidden" name="disabled" value={disabled ? "false" : "true"} />
          <button type="submit" disabled={accessPending} className={button}>
            {disabled ? "Enable" : "Disable"}
          </button>
        </form>
      </div>
      <ActionMessage state={roleState} testId="staff-action" />
      <ActionMessage state={accessState} testId="staff-action" />
    </div>
  );
}
