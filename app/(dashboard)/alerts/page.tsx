import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { AlertsList } from "./_components/alerts-list";
import { AlertsWorkerStatus } from "./_components/alerts-worker-status";
import { hasRole } from "@/lib/auth/roles";
import { alertKindLabels, alertKinds, InboxFilters, listInbox, readWorkerHealth } from "@/lib/alerts";
import { env } from "@/lib/env";
import { runAction } from "@/app/(dashboard)/actions";

const acknowledgeAlertsAction = runAction.bind(null, "alert.acknowledge");

export const metadata: Metadata = { title: "Alerts" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

const select = "mt-1 block rounded-md border border-zinc-300 bg-white px-3 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950";

export default async function AlertsPage({ searchParams }: { searchParams: SearchParams }) {
  const staff = await requirePageRole("viewer");
  const params = await searchParams;
  const filters = InboxFilters.parse({ kind: first(params.kind), state: first(params.state), limit: first(params.limit) });
  const db = await getDb();
  const silentAfterSeconds = env().WORKER_SILENT_AFTER_SECONDS;
  const [inbox, workers] = await Promise.all([listInbox(db, filters), readWorkerHealth(db, { silentAfterSeconds })]);
  const canAcknowledge = hasRole(staff.role, "operator");
  const openShown = inbox.alerts.filter((a) => a.acknowledgedAt === null).map((a) => a.id);
  return (
    <section className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Alerts</h1>
          <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400" data-testid="alerts-summary">
            {inbox.unacknowledged} unacknowledged of {inbox.total}. Unacknowledged first, newest first.
            {canAcknowledge ? "" : " Your role (viewer) can read alerts; operators and admins acknowledge them."}
          </p>
        </div>
        {hasRole(staff.role, "admin") ? (
          <Link href="/alerts/destinations" className="text-sm underline">
            Delivery destinations
          </Link>
        ) : null}
      </div>

      <AlertsWorkerStatus workers={workers} silentAfterSeconds={silentAfterSeconds} />

      <div className="flex flex-wrap items-end justify-between gap-3">
        <form method="get" className="flex flex-wrap items-end gap-3" aria-label="Filter alerts">
          <label className="text-sm font-medium">
            Kind
            <select name="kind" defaultValue={filters.kind ?? ""} className={select}>
              <option value="">All kinds</option>
              {alertKinds.map((k) => (
                <option key={k} value={k}>
                  {alertKindLabels[k]} ({inbox.kinds.find((x) => x.kind === k)?.n ?? 0})
                </option>
              ))}
            </select>
          </label>
          <label className="text-sm font-medium">
            State
            <select name="state" defaultValue={filters.state} className={select}>
              <option value="all">All</option>
              <option value="open">Unacknowledged</option>
              <option value="acknowledged">Acknowledged</option>
            </select>
          </label>
          <button type="submit" className="rounded-md border border-zinc-300 px-3 py-1.5 text-sm dark:border-zinc-700">
            Filter
          </button>
        </form>
        {canAcknowledge && openShown.length > 1 ? (
          <AlertsActionForm
            action={acknowledgeAlertsAction}
            fields={{ alertId: openShown }}
            label={`Acknowledge all ${openShown.length} shown`}
            confirm={`Acknowledge ${openShown.length} alerts?`}
            testId="acknowledge-all"
          />
        ) : null}
      </div>

      <AlertsList alerts={inbox.alerts} canAcknowledge={canAcknowledge} acknowledge={acknowledgeAlertsAction} />
      {inbox.alerts.length === filters.limit ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Showing the first {filters.limit}. Filter by kind or state, or acknowledge these, to see the rest.
        </p>
      ) : null}
    </section>
  );
}
