import Link from "next/link";
import { alertKindLabels, isAlertKind, type DeliveryView, type InboxAlert } from "@/lib/alerts";
import type { FormAction } from "@/app/_lib/action-state";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { formatDateTime } from "@/lib/format";

function kindLabel(kind: string): string {
  return isAlertKind(kind) ? alertKindLabels[kind] : kind;
}

function DeliveryLine({ d }: { d: DeliveryView }) {
  const state =
    d.state === "delivered"
      ? `delivered ${d.deliveredAt ? formatDateTime(d.deliveredAt, { seconds: true }) : ""} UTC`
      : d.state === "failed"
        ? "failed: gave up"
        : d.attempts === 0
          ? "queued"
          : `retrying at ${formatDateTime(d.nextAttemptAt, { seconds: true })} UTC`;
  return (
    <li data-testid="delivery" data-state={d.state} className="flex flex-wrap gap-x-2">
      <span className="font-medium">{d.destinationName}</span>
      <span className={d.state === "failed" ? "text-red-700 dark:text-red-400" : d.state === "delivered" ? "text-emerald-800 dark:text-emerald-300" : ""}>
        {state}
      </span>
      <span className="text-zinc-500">
        {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
      </span>
      {d.lastError && d.state !== "delivered" ? <span className="text-zinc-600 dark:text-zinc-400">last error: {d.lastError}</span> : null}
    </li>
  );
}

/** The inbox: each alert with its links, its deliveries and, for operators, an acknowledge button. */
export function AlertsList({ alerts, canAcknowledge, acknowledge }: { alerts: InboxAlert[]; canAcknowledge: boolean; acknowledge: FormAction }) {
  if (alerts.length === 0) {
    return (
      <p className="rounded-lg border border-dashed border-zinc-300 p-6 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">No alerts match.</p>
    );
  }
  return (
    <ol className="space-y-3">
      {alerts.map((a) => {
        const open = a.acknowledgedAt === null;
        return (
          <li
            key={a.id}
            data-testid="alert-row"
            data-kind={a.kind}
            data-acknowledged={open ? "false" : "true"}
            className={`rounded-lg border p-4 ${open ? "border-amber-300 bg-amber-50/60 dark:border-amber-800 dark:bg-amber-950/30" : "border-zinc-200 dark:border-zinc-800"}`}
          >
            <div className="flex flex-wrap items-start justify-between gap-3">
              <div className="min-w-0 space-y-1">
                <p className="text-xs font-semibold uppercase tracking-wide text-zinc-600 dark:text-zinc-400">
                  {kindLabel(a.kind)}
                  {a.endpointKey ? <span className="ml-2 font-mono normal-case">{a.endpointKey}</span> : null}
                  {a.budgetKey && !a.endpointKey ? <span className="ml-2 font-mono normal-case">budget {a.budgetKey}</span> : null}
                </p>
                <p className="text-sm" data-testid="alert-message">
                  {a.message}
                </p>
                <p className="text-xs text-zinc-500">
                  #{a.id} · fired {formatDateTime(a.createdAt, { seconds: true })} UTC
                  {a.acknowledgedAt ? ` · acknowledged by ${a.acknowledgedBy ?? "unknown"} ${formatDateTime(a.acknowledgedAt, { seconds: true })} UTC` : ""}
                </p>
                {a.links?.mapIt !== undefined ? (
                  <p className="flex gap-3 text-xs">
                    <Link href={a.links.mapIt} className="underline" data-testid="alert-map-it">
                      Map it
                    </Link>
                  </p>
                ) : a.links?.chart !== undefined ? (
                  <p className="flex gap-3 text-xs">
                    <Link href={a.links.chart} className="underline">
                      Spend chart
                    </Link>
                    <Link href={a.links.refusals} className="underline">
                      Refusals in this window
                    </Link>
                  </p>
                ) : null}
              </div>
              {open && canAcknowledge ? (
                <AlertsActionForm action={acknowledge} fields={{ alertId: a.id }} label="Acknowledge" pendingLabel="Acknowledging…" testId="acknowledge" />
              ) : null}
            </div>
            {a.deliveries.length > 0 ? (
              <ul className="mt-2 space-y-0.5 border-t border-zinc-200 pt-2 text-xs dark:border-zinc-800" aria-label="Deliveries">
                {a.deliveries.map((d) => (
                  <DeliveryLine key={d.destinationId} d={d} />
                ))}
              </ul>
            ) : (
              <p className="mt-2 border-t border-zinc-200 pt-2 text-xs text-zinc-500 dark:border-zinc-800">
                Not sent anywhere: no destination was enabled when it fired.
              </p>
            )}
          </li>
        );
      })}
    </ol>
  );
}
