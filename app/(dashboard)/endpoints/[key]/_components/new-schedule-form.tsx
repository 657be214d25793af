"use client";

import { useActionState, useId, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { ActionMessage } from "@/components/action-message";
import { ReasonField } from "@/components/reason-field";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";

const createScheduleAction = runAction.bind(null, "schedule.create");

export type ScheduleCeilingOption = { id: number; label: string };

/**
 * A kill, a restore or a new value at a time (UTC), once or every day. Who may: a kill or a restore
 * an operator, a value an admin; a value above the one in force is asked as a raise (a second
 * admin approves it before it can run). The server decides all of that; the form only says it.
 */
export function NewScheduleForm({ endpointKey, ceilings, isAdmin }: { endpointKey: string; ceilings: ScheduleCeilingOption[]; isAdmin: boolean }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(createScheduleAction, IDLE);
  const [action, setAction] = useState<"kill" | "restore" | "value">("kill");
  const [repeat, setRepeat] = useState<"once" | "daily">("once");
  return (
    <form action={formAction} className="space-y-3" data-testid="new-schedule">
      <input type="hidden" name="endpointKey" value={endpointKey} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-action`} className={labelClass}>
            Action
          </label>
          <select
            id={`${id}-action`}
            name="action"
            value={action}
            onChange={(e) => setAction(e.target.value === "value" ? "value" : e.target.value === "restore" ? "restore" : "kill")}
            className={inputClass}
          >
            <option value="kill">Kill</option>
            <option value="restore">Restore</option>
            <option value="value">New value</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-ceiling`} className={labelClass}>
            Ceiling
          </label>
          <select
            id={`${id}-ceiling`}
            name="ceilingId"
            className={inputClass}
            defaultValue={action === "value" ? String(ceilings[0]?.id ?? "") : ""}
            key={action === "value" ? "one" : "any"}
          >
            {action === "value" ? null : <option value="">Every ceiling of the endpoint</option>}
            {ceilings.map((c) => (
              <option key={c.id} value={c.id}>
                {c.label}
              </option>
            ))}
          </select>
        </div>
        {action === "value" ? (
          <div>
            <label htmlFor={`${id}-value`} className={labelClass}>
              New value
            </label>
            <input
              id={`${id}-value`}
              name="value"
              type="text"
              inputMode="numeric"
              required
              autoComplete="off"
              className={inputClass}
              aria-describedby={`${id}-hint`}
            />
          </div>
        ) : null}
        {action === "value" ? (
          // Optional here: the server asks for it when the value is 5x or more the one that stands.
          <div>
            <label htmlFor={`${id}-confirm`} className={labelClass}>
              Value again (a raise of 5× or more)
            </label>
            <input
              id={`${id}-confirm`}
              name="confirm"
              type="text"
              inputMode="numeric"
              autoComplete="off"
              className={inputClass}
              data-testid="schedule-confirm"
            />
          </div>
        ) : null}
        <div>
          <label htmlFor={`${id}-repeat`} className={labelClass}>
            Repeat
          </label>
          <select
            id={`${id}-repeat`}
            name="repeat"
            value={repeat}
            onChange={(e) => setRepeat(e.target.value === "daily" ? "daily" : "once")}
            className={inputClass}
          >
            <option value="once">Once</option>
            <option value="daily">Every day</option>
          </select>
        </div>
        {repeat === "once" ? (
          <div>
            <label htmlFor={`${id}-run-at`} className={labelClass}>
              Run at (UTC)
            </label>
            <input id={`${id}-run-at`} name="runAt" type="datetime-local" required className={inputClass} />
          </div>
        ) : (
          <div>
            <label htmlFor={`${id}-time`} className={labelClass}>
              Time of day (UTC, HH:MM)
            </label>
            <input
              id={`${id}-time`}
              name="timeOfDay"
              type="text"
              required
              placeholder="22:00"
              pattern="[0-9]{2}:[0-9]{2}"
              maxLength={5}
              autoComplete="off"
              className={inputClass}
            />
          </div>
        )}
        <ReasonField id={id} />
      </div>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        Times are UTC.{" "}
        {isAdmin
          ? "A value above the one in force is a raise: it waits for another admin's approval before it can run."
          : "Operators schedule kills and restores, and may ask for a raise (another admin approves it); a lower value is an admin's."}{" "}
        A value not below the one that stands (after a temporary raise ends, or a restore) is a raise; one of 5× or more is typed twice. A value is clamped to
        the ceiling&apos;s bounds, and said so. On a killed ceiling a scheduled value does nothing: whoever killed decides.
      </p>
      <SubmitButton pending={pending} pendingLabel="Scheduling…">
        Schedule
      </SubmitButton>
      <ActionMessage state={state} testId="new-schedule" />
    </form>
  );
}
