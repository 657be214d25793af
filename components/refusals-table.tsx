import Link from "next/link";
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
  if (rows.length === 0) return <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="refusals-empty">{empty}</p>;
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label={caption}>
      <table className="min-w-full text-left text-sm" data-testid="refusals-table">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-zinc-100 text-xs uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
          <tr>
            <th scope="col" className="px-3 py-2">First (UTC)</th>
            <th scope="col" className="px-3 py-2">Endpoint</th>
            <th scope="col" className="px-3 py-2">Gate</th>
            <th scope="col" className="px-3 py-2">Caller</th>
            <th scope="col" className="px-3 py-2">Destination</th>
            <th scope="col" className="px-3 py-2 text-right">Amount</th>
            <th scope="col" className="px-3 py-2 text-right">Count</th>
            <th scope="col" className="px-3 py-2"><span className="sr-only">Details</span></th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
          {rows.map((r) => (
            <tr key={r.id} data-testid="refusal-row" data-gate={r.gate} data-endpoint={r.endpointKey}>
              <td className="whitespace-nowrap px-3 py-2 tabular-nums">
                <time dateTime={r.at.toISOString()}>{formatUtc(r.at).replace(" UTC", "")}</time>
              </td>
              <td className="px-3 py-2 font-mono text-xs">{r.endpointKey}</td>
              <td className="px-3 py-2 font-mono text-xs">{r.gate}</td>
              <td className="px-3 py-2 font-mono text-xs">{r.caller || "—"}</td>
              <td className="px-3 py-2 font-mono text-xs">{r.destination || "—"}</td>
              <td className="px-3 py-2 text-right tabular-nums">{formatCount(r.amount)}</td>
              <td className="px-3 py-2 text-right tabular-nums" title={r.count > 1 ? `folded: last at ${formatUtc(r.lastAt)}` : undefined}>
                {r.count > 1 ? <strong>×{formatCount(r.count)}</strong> : "1"}
              </td>
              <td className="px-3 py-2">
                <Link href={`/refusals/${r.id}`} className="text-sky-700 underline hover:no-underline dark:text-sky-400">
                  details<span className="sr-only"> of refusal {r.id}</span>
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
