import Link from "next/link";
import { ReconciliationChart } from "@/components/charts/reconciliation-chart";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import { cardClass } from "@/components/ui";
import { formatAgo, formatDay, formatUnits } from "@/lib/format";
import type { EndpointReconciliation, ReconDay } from "@/lib/reconciliation/read";
import { usageSourceKindLabels } from "@/lib/reconciliation/types";
import { driftDirectionSentence, driftPercentText } from "@/lib/reconciliation/words";

// Does the ledger match the bill: the provider's numbers beside Ceilings' charges for this
// endpoint, drawn over 30 and 90 days, and the last 7 days written out with their drift.

function daysTable(unit: string, currency: string): TableSpec<ReconDay> {
  const both = (units: number | null, micros: number | null) =>
    units === null || micros === null ? (
      "not reported"
    ) : (
      <>
        {formatUnits(units, unit)} · <Money micros={micros} currency={currency} />
      </>
    );
  return {
    testId: "reconciliation-days",
    rowKey: (d) => d.day,
    rowAttributes: (d) => ({ "data-day": d.day, "data-over": d.final && d.drift?.over ? "true" : "false", "data-final": d.final ? "true" : "false" }),
    empty: null,
    columns: [
      { header: "Provider day", cell: (d) => formatDay(d.day) },
      { header: "Billed by the provider", cell: (d) => both(d.billedUnits, d.billedMicros) },
      {
        header: "Charged by Ceilings",
        cell: (d) =>
          d.chargedUnits === null ? (
            "not compared"
          ) : (
            <>
              {both(d.chargedUnits, d.chargedMicros)}
              {d.held > 0 ? ` (${d.held} still held)` : ""}
            </>
          ),
      },
      {
        header: "Drift",
        cell: (d) =>
          d.drift === null ? (
            <span className="text-zinc-600 dark:text-zinc-400">not compared</span>
          ) : !d.final ? (
            // Reservations still held, or a provider that may still report the day: not alerted.
            <span className="text-zinc-600 dark:text-zinc-400" data-testid="drift-percent">
              {driftPercentText(d.drift)} not final
            </span>
          ) : (
            <span className={d.drift.over ? "font-semibold text-red-800 dark:text-red-300" : ""} data-testid="drift-percent">
              {driftPercentText(d.drift)}
              {d.drift.over ? " past the threshold" : " within the threshold"}
            </span>
          ),
      },
      { header: "Which way", cell: (d) => (d.drift === null ? "" : driftDirectionSentence(d.drift)) },
    ],
  };
}

export function ReconciliationSection({ endpointKey, reconciliation, now }: { endpointKey: string; reconciliation: EndpointReconciliation; now: Date }) {
  const { source, ranges } = reconciliation;
  const series = ranges[30];
  const last7 = series.days.slice(-7).reverse();
  return (
    <section aria-labelledby="reconciliation-title" id="reconciliation" className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="reconciliation-title" className="text-lg font-semibold">
          Reconciliation
        </h2>
        <Link href="/reconciliation" className="text-sm underline underline-offset-2">
          All endpoints
        </Link>
      </div>
      <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="reconciliation-source">
        {source ? (
          <>
            Reported by{" "}
            <Link href={`/reconciliation/sources/${source.id}`} className="font-medium underline underline-offset-2">
              {source.name}
            </Link>{" "}
            ({usageSourceKindLabels[source.kind]}; days in {source.timeZone}).{" "}
            {source.lastPullError ? (
              <span className="text-red-800 dark:text-red-300">Last pull failed: {source.lastPullError}</span>
            ) : source.lastPullOkAt ? (
              `Last pulled ${formatAgo(source.lastPullOkAt, now)}.`
            ) : (
              "Not pulled yet."
            )}
          </>
        ) : (
          <>
            No usage source maps {endpointKey}: what the provider bills for it is not compared with what Ceilings charged. Connect one on the{" "}
            <Link href="/reconciliation" className="underline underline-offset-2">
              Reconciliation page
            </Link>
            .
          </>
        )}
      </p>
      <div className={cardClass}>
        <ReconciliationChart ranges={ranges} hasSource={source !== null} />
      </div>
      {source || last7.some((d) => d.drift !== null) ? (
        <div className="space-y-2">
          <h3 className="text-base font-semibold">Last 7 days</h3>
          <DataTable spec={daysTable(series.unit, series.currency)} caption={`Billed beside charged for ${endpointKey}, last 7 provider days`} rows={last7} />
        </div>
      ) : null}
    </section>
  );
}
