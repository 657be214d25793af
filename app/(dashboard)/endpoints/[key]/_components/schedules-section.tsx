import { runAction } from "@/app/(dashboard)/actions";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { DataTable, type TableSpec } from "@/components/data-table";
import { cardClass } from "@/components/ui";
import type { ScheduleView } from "@/lib/changes";
import { timeOfDayOf } from "@/lib/changes/schedule-time";
import { formatCount, formatUtc } from "@/lib/format";
import { NewScheduleForm, type ScheduleCeilingOption } from "./new-schedule-form";

const cancelScheduleAction = runAction.bind(null, "schedule.cancel");

const STATE: Record<ScheduleView["state"], string> = {
  awaiting_approval: "awaiting approval",
  scheduled: "scheduled",
  done: "done",
  cancelled: "cancelled",
};

function what(s: ScheduleView, ceilings: ScheduleCeilingOption[]): string {
  const on = s.ceilingId === null ? "every ceiling" : (ceilings.find((c) => c.id === s.ceilingId)?.label ?? `ceiling #${s.ceilingId}`);
  return s.action === "value" ? `set ${on} to ${formatCount(s.value ?? 0)}` : `${s.action} ${on}`;
}

function spec(ceilings: ScheduleCeilingOption[], canCancel: boolean): TableSpec<ScheduleView> {
  return {
    testId: "schedules",
    rowKey: (s) => s.id,
    rowAttributes: (s) => ({ "data-testid": "schedule-row", "data-state": s.state, "data-schedule-id": String(s.id) }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">Nothing is scheduled for this endpoint.</p>,
    columns: [
      { header: "Next run", cell: (s) => formatUtc(s.runAt) },
      { header: "Repeat", cell: (s) => (s.repeat === "daily" ? `every day at ${timeOfDayOf(s.runAt)} UTC` : "once") },
      { header: "Change", cell: (s) => what(s, ceilings) },
      {
        header: "State",
        cell: (s) => (
          <span>
            {STATE[s.state]}
            {s.state === "awaiting_approval" && s.requestId !== null ? (
              <>
                {" "}
                (
                <a href={`/changes/${s.requestId}`} className="underline">
                  request #{s.requestId}
                </a>
                )
              </>
            ) : null}
            {s.lastOutcome ? <span className="block text-xs text-zinc-600 dark:text-zinc-400">last run: {s.lastOutcome}</span> : null}
          </span>
        ),
      },
      { header: "Who", cell: (s) => <span title={s.reason}>{s.createdBy}</span> },
      {
        header: <span className="sr-only">Cancel</span>,
        label: "Cancel",
        cell: (s) =>
          canCancel ? (
            <ConfirmActionButton
              action={cancelScheduleAction}
              label="Cancel"
              title={`Cancel schedule #${s.id}?`}
              description={`It will not run: ${what(s, ceilings)}.`}
              confirmLabel="Cancel schedule"
              fields={{ scheduleId: String(s.id) }}
              reason="required"
              tone="neutral"
              testId="cancel-schedule"
            />
          ) : null,
      },
    ],
  };
}

/** The endpoint's schedules, soonest first, and (operators and admins) a form for a new one. */
export function SchedulesSection(p: {
  endpointKey: string;
  schedules: ScheduleView[];
  ceilings: ScheduleCeilingOption[];
  canSchedule: boolean;
  isAdmin: boolean;
}) {
  return (
    <section aria-labelledby="schedules-title" className="space-y-3" data-testid="endpoint-schedules">
      <h2 id="schedules-title" className="text-lg font-semibold">
        Schedules
      </h2>
      <DataTable spec={spec(p.ceilings, p.canSchedule)} caption={`Schedules of ${p.endpointKey}`} rows={p.schedules} />
      {p.canSchedule ? (
        <details className={`${cardClass} text-sm`}>
          <summary className="cursor-pointer font-medium">New schedule</summary>
          <div className="mt-3">
            <NewScheduleForm endpointKey={p.endpointKey} ceilings={p.ceilings} isAdmin={p.isAdmin} />
          </div>
        </details>
      ) : null}
    </section>
  );
}
