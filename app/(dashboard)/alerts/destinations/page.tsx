import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { AlertsDestinationForm } from "./_components/destination-form";
import { DataTable, type TableSpec } from "@/components/data-table";
import { listDestinations, type DestinationView } from "@/lib/alerts";
import { formatDateTime } from "@/lib/format";
import { runAction } from "@/app/(dashboard)/actions";

const createDestinationAction = runAction.bind(null, "alert_destination.create");
const deleteDestinationAction = runAction.bind(null, "alert_destination.delete");
const setDestinationEnabledAction = runAction.bind(null, "alert_destination.enable");

export const metadata: Metadata = { title: "Alert destinations" };

const destinationTable: TableSpec<DestinationView> = {
  rowKey: (d) => d.id,
  rowAttributes: (d) => ({ "data-testid": "destination-row", "data-name": d.name }),
  empty: (
    <p className="rounded-lg border border-dashed border-zinc-300 p-6 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
      No destinations: alerts appear in the inbox but reach nobody outside it.
    </p>
  ),
  columns: [
    { header: "Name", cellClassName: "font-medium", cell: (d) => d.name },
    { header: "Kind", cell: (d) => d.kind },
    { header: "URL", cellClassName: "max-w-xs truncate font-mono text-xs", cell: (d) => <span title={d.target}>{d.target}</span> },
    {
      header: "Signing secret",
      cell: (d) =>
        d.signingSecret ? (
          <details>
            <summary className="cursor-pointer text-xs">show</summary>
            <code className="break-all font-mono text-xs" data-testid="signing-secret">
              {d.signingSecret}
            </code>
          </details>
        ) : (
          <span className="text-zinc-500">none</span>
        ),
    },
    { header: "Added", cellClassName: "text-xs", cell: (d) => `${formatDateTime(d.createdAt, { seconds: true })} UTC by ${d.createdBy}` },
    {
      header: "State",
      cellClassName: "space-x-2",
      cell: (d) => (
        <>
          <span className={d.enabled ? "text-emerald-800 dark:text-emerald-300" : "text-zinc-500"}>{d.enabled ? "enabled" : "disabled"}</span>
          <AlertsActionForm
            action={setDestinationEnabledAction}
            fields={{ id: d.id, enabled: d.enabled ? "false" : "true" }}
            label={d.enabled ? "Disable" : "Enable"}
          />
          <AlertsActionForm
            action={deleteDestinationAction}
            fields={{ id: d.id }}
            label="Delete"
            tone="danger"
            confirm={`Delete "${d.name}" and its delivery history?`}
          />
        </>
      ),
    },
  ],
};

export default async function AlertDestinationsPage() {
  await requirePageRole("admin");
  const destinations = await listDestinations(await getDb());
  return (
    <section className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/alerts" className="underline">
            Alerts
          </Link>
        </p>
        <h1 className="text-2xl font-semibold">Alert destinations</h1>
        <p className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
          Every alert is queued for each enabled destination in the transaction that fires it, then sent by the worker with retries (exponential backoff) until
          delivered or given up. Slack destinations get <code>{"{ text, blocks }"}</code>. Generic webhooks get a JSON body with headers{" "}
          <code>X-Ceilings-Timestamp</code> and <code>X-Ceilings-Signature: sha256=HMAC(secret, timestamp + &quot;.&quot; + body)</code>; deduplicate on{" "}
          <code>X-Ceilings-Delivery</code>.
        </p>
      </div>
      <DataTable spec={destinationTable} caption="Alert destinations" rows={destinations} />
      <AlertsDestinationForm action={createDestinationAction} />
    </section>
  );
}
