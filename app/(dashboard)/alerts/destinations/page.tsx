import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { AlertsDestinationForm } from "@/components/alerts-destination-form";
import { formatDateTime } from "@/lib/format";
import { listDestinations } from "@/lib/alerts";
import { createDestinationAction, deleteDestinationAction, setDestinationEnabledAction } from "../actions";

export const metadata: Metadata = { title: "Alert destinations" };

export default async function AlertDestinationsPage() {
  await requirePageRole("admin");
  const destinations = await listDestinations(await getDb());
  return (
    <section className="space-y-6">
      <div>
        <p className="text-sm"><Link href="/alerts" className="underline">Alerts</Link></p>
        <h1 className="text-2xl font-semibold">Alert destinations</h1>
        <p className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
          Every alert is queued for each enabled destination in the transaction that fires it, then sent by the worker with
          retries (exponential backoff) until delivered or given up. Slack destinations get <code>{"{ text, blocks }"}</code>.
          Generic webhooks get a JSON body with headers <code>X-Ceilings-Timestamp</code> and{" "}
          <code>X-Ceilings-Signature: sha256=HMAC(secret, timestamp + &quot;.&quot; + body)</code>; deduplicate on{" "}
          <code>X-Ceilings-Delivery</code>.
        </p>
      </div>
      {destinations.length === 0 ? (
        <p className="rounded-lg border border-dashed border-zinc-300 p-6 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
          No destinations: alerts appear in the inbox but reach nobody outside it.
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800">
          <table className="min-w-full divide-y divide-zinc-200 text-sm dark:divide-zinc-800">
            <thead className="bg-zinc-100 text-left dark:bg-zinc-900">
              <tr>
                <th scope="col" className="px-3 py-2 font-medium">Name</th>
                <th scope="col" className="px-3 py-2 font-medium">Kind</th>
                <th scope="col" className="px-3 py-2 font-medium">URL</th>
                <th scope="col" className="px-3 py-2 font-medium">Signing secret</th>
                <th scope="col" className="px-3 py-2 font-medium">Added</th>
                <th scope="col" className="px-3 py-2 font-medium">State</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
              {destinations.map((d) => (
                <tr key={d.id} data-testid="destination-row" data-name={d.name}>
                  <td className="px-3 py-2 font-medium">{d.name}</td>
                  <td className="px-3 py-2">{d.kind}</td>
                  <td className="max-w-xs truncate px-3 py-2 font-mono text-xs" title={d.target}>{d.target}</td>
                  <td className="px-3 py-2">
                    {d.signingSecret ? (
                      <details>
                        <summary className="cursor-pointer text-xs">show</summary>
                        <code className="break-all font-mono text-xs" data-testid="signing-secret">{d.signingSecret}</code>
                      </details>
                    ) : (
                      <span className="text-zinc-500">none</span>
                    )}
                  </td>
                  <td className="px-3 py-2 text-xs">{formatDateTime(d.createdAt, { seconds: true })} UTC by {d.createdBy}</td>
                  <td className="space-x-2 px-3 py-2">
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
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <AlertsDestinationForm action={createDestinationAction} />
    </section>
  );
}
