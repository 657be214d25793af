import type { Refusal } from "@/db/schema";
import { formatUtc } from "@/components/format";
import { formatCount } from "@/lib/ceilings/parse";

export function RefusalTable({ refusals, caption }: { refusals: Refusal[]; caption: string }) {
  if (refusals.length === 0) return <p className="text-sm text-zinc-600 dark:text-zinc-400">No refusals recorded for this endpoint.</p>;
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label={caption}>
      <table className="min-w-full text-left text-sm" data-testid="refusal-table">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-zinc-100 text-xs uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
          <tr>
            <th scope="col" className="px-3 py-2">Last (UTC)</th>
            <th scope="col" className="px-3 py-2">Gate</th>
            <th scope="col" className="px-3 py-2">Caller</th>
            <th scope="col" className="px-3 py-2">Destination</th>
            <th scope="col" className="px-3 py-2">Amount</th>
            <th scope="col" className="px-3 py-2">Count</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
          {refusals.map((r) => (
            <tr key={r.id}>
              <td className="whitespace-nowrap px-3 py-2 tabular-nums"><time dateTime={r.lastAt.toISOString()}>{formatUtc(r.lastAt).replace(" UTC", "")}</time></td>
              <td className="px-3 py-2 font-mono text-xs">{r.gate}</td>
              <td className="px-3 py-2">{r.caller || "—"}</td>
              <td className="px-3 py-2">{r.destination || "—"}</td>
              <td className="px-3 py-2 tabular-nums">{formatCount(r.amount)}</td>
              <td className="px-3 py-2 tabular-nums">{formatCount(r.count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
