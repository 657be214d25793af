import Link from "next/link";
import { AccountLink } from "@/components/account-link";
import { type Column, DataTable, type TableSpec } from "@/components/data-table";
import { formatCount, formatUtc } from "@/lib/format";

export type RefusalsTableRow = {
  id: number;
  at: Date;
  lastAt: Date;
  endpointKey: string;
  gate: string;
  caller: string;
  destination: string;
  amount: number;
  count: number;
};

const columns: Column<RefusalsTableRow>[] = [
  { header: "First (UTC)", cellClassName: "whitespace-nowrap tabular-nums", cell: (r) => <time dateTime={r.at.toISOString()}>{formatUtc(r.at).replace(" UTC", "")}</time> },
  { header: "Endpoint", cellClassName: "font-mono text-xs", cell: (r) => r.endpointKey },
  { header: "Gate", cellClassName: "font-mono text-xs", cell: (r) => r.gate },
  { header: "Caller", cellClassName: "font-mono text-xs", cell: (r) => (r.caller ? <AccountLink account={r.caller} /> : "—") },
  { header: "Destination", cellClassName: "font-mono text-xs", cell: (r) => r.destination || "—" },
  { header: "Amount", className: "text-right", cellClassName: "tabular-nums", cell: (r) => formatCount(r.amount) },
  {
    header: "Count",
    className: "text-right",
    cellClassName: "tabular-nums",
    cell: (r) => (r.count > 1 ? <strong title={`folded: last at ${formatUtc(r.lastAt)}`}>×{formatCount(r.count)}</strong> : "1"),
  },
  {
    header: <span className="sr-only">Details</span>,
    cell: (r) => (
      <Link href={`/refusals/${r.id}`} className="text-sky-700 underline hover:no-underline dark:text-sky-400">
        details<span className="sr-only"> of refusal {r.id}</span>
      </Link>
    ),
  },
];

/**
 * Refusal rows newest first; a folded row shows how many identical refusals it stands for. Used by
 * the refusal log and by each endpoint page's recent refusals.
 */
export function RefusalsTable({
  rows,
  caption,
  empty = "No refusals match these filters.",
}: {
  rows: RefusalsTableRow[];
  caption: string;
  empty?: string;
}) {
  const spec: TableSpec<RefusalsTableRow> = {
    columns,
    testId: "refusals-table",
    rowKey: (r) => r.id,
    rowAttributes: (r) => ({ "data-testid": "refusal-row", "data-gate": r.gate, "data-endpoint": r.endpointKey }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="refusals-empty">{empty}</p>,
  };
  return <DataTable spec={spec} caption={caption} rows={rows} />;
}
