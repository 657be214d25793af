import Link from "next/link";
import { AccountLink } from "@/components/account-link";
import { type Column, DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
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
  /** What the limit that refused had left; a budget's is money, in micros of its currency. */
  remaining?: number | null;
  count: number;
};

const firstColumns: Column<RefusalsTableRow>[] = [
  {
    header: "First (UTC)",
    cellClassName: "whitespace-nowrap tabular-nums",
    cell: (r) => <time dateTime={r.at.toISOString()}>{formatUtc(r.at).replace(" UTC", "")}</time>,
  },
  { header: "Endpoint", cellClassName: "font-mono text-xs", cell: (r) => r.endpointKey },
  { header: "Gate", cellClassName: "font-mono text-xs", cell: (r) => r.gate },
  { header: "Caller", cellClassName: "font-mono text-xs", cell: (r) => (r.caller ? <AccountLink account={r.caller} /> : "—") },
  { header: "Destination", cellClassName: "font-mono text-xs", cell: (r) => r.destination || "—" },
];

const lastColumns: Column<RefusalsTableRow>[] = [
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
 * The amount a call asked for is in its endpoint's units; a budget counts money, so its refusals
 * also say, in its currency, what it had left when it said no.
 */
function amountColumns(budgetCurrency: string | undefined): Column<RefusalsTableRow>[] {
  if (budgetCurrency === undefined) return [{ header: "Amount", className: "text-right", cellClassName: "tabular-nums", cell: (r) => formatCount(r.amount) }];
  return [
    { header: "Units asked", className: "text-right", cellClassName: "tabular-nums", cell: (r) => formatCount(r.amount) },
    {
      header: "Budget left",
      className: "text-right",
      cellClassName: "tabular-nums",
      cell: (r) => (r.remaining === null || r.remaining === undefined ? "—" : <Money micros={r.remaining} currency={budgetCurrency} />),
    },
  ];
}

/**
 * Refusal rows newest first; a folded row shows how many identical refusals it stands for. Used by
 * the refusal log, each endpoint page's recent refusals, and a budget's page with its currency.
 */
export function RefusalsTable({
  rows,
  caption,
  empty = "No refusals match these filters.",
  budgetCurrency,
}: {
  rows: RefusalsTableRow[];
  caption: string;
  empty?: string;
  /** The refusing budget's currency: only a budget's page lists its refusals alone. */
  budgetCurrency?: string;
}) {
  const spec: TableSpec<RefusalsTableRow> = {
    columns: [...firstColumns, ...amountColumns(budgetCurrency), ...lastColumns],
    testId: "refusals-table",
    rowKey: (r) => r.id,
    rowAttributes: (r) => ({ "data-testid": "refusal-row", "data-gate": r.gate, "data-endpoint": r.endpointKey }),
    empty: (
      <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="refusals-empty">
        {empty}
      </p>
    ),
  };
  return <DataTable spec={spec} caption={caption} rows={rows} />;
}
