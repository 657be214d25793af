import type { AuditEvent } from "@/db/schema";
import { formatCount, formatUtc } from "@/lib/format";

function valueChange(e: AuditEvent): string {
  if (e.previousValue === null && e.appliedValue === null) return "";
  const from = e.previousValue === null ? "none" : formatCount(e.previousValue);
  const to = e.appliedValue === null ? "none" : formatCount(e.appliedValue);
  return `${from} → ${to}`;
}

const shown = (v: unknown) => (typeof v === "number" ? formatCount(v) : v === null || v === undefined ? "none" : typeof v === "string" ? v : JSON.stringify(v));

/** A catalog change's before and after, from its details: "unit price 7,900 → 8,000". */
function detailChange(e: AuditEvent): string {
  const changes = e.details?.changes;
  if (Array.isArray(changes)) return changes.filter((c): c is string => typeof c === "string").join("; ");
  if (changes && typeof changes === "object") {
    return Object.entries(changes)
      .map(([field, c]) => (c && typeof c === "object" && "before" in c && "after" in c ? `${field} ${shown(c.before)} → ${shown(c.after)}` : field))
      .join("; ");
  }
  const ceilings = e.details?.ceilings;
  if (e.action === "endpoint.create" && Array.isArray(ceilings)) return `created with ${ceilings.length} ceiling(s)`;
  return "";
}

/** Audit events as a table; on narrow screens it scrolls sideways inside its own box. */
export function AuditTable({ events, caption }: { events: AuditEvent[]; caption: string }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label={caption}>
      <table className="min-w-full text-left text-sm" data-testid="audit-table">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-zinc-100 text-xs uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
          <tr>
            <th scope="col" className="px-3 py-2">When (UTC)</th>
            <th scope="col" className="px-3 py-2">Who</th>
            <th scope="col" className="px-3 py-2">Kind</th>
            <th scope="col" className="px-3 py-2">Endpoint</th>
            <th scope="col" className="px-3 py-2">Typed</th>
            <th scope="col" className="px-3 py-2">Value</th>
            <th scope="col" className="px-3 py-2">Clamped</th>
            <th scope="col" className="px-3 py-2">Reason</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
          {events.map((e) => (
            <tr key={e.id} data-testid="audit-row">
              <td className="whitespace-nowrap px-3 py-2 tabular-nums">
                <time dateTime={e.at.toISOString()}>{formatUtc(e.at).replace(" UTC", "")}</time>
              </td>
              <td className="px-3 py-2">
                {e.actor}
                {e.actorType !== "staff" ? <span className="ml-1 text-xs text-zinc-500 dark:text-zinc-400">({e.actorType})</span> : null}
              </td>
              <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">{e.action}</td>
              <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">
                {e.endpointKey ?? ""}
                {e.ceilingId !== null ? ` #${e.ceilingId}` : ""}
                {e.target ? ` ${e.target}` : ""}
              </td>
              <td className="px-3 py-2 font-mono text-xs">{e.rawInput ?? ""}</td>
              <td className="px-3 py-2 tabular-nums">{valueChange(e) || detailChange(e)}</td>
              <td className="px-3 py-2">{e.clamped === null ? "" : e.clamped ? "yes" : "no"}</td>
              <td className="px-3 py-2">{e.reason ?? <span className="text-zinc-500">no reason given</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {events.length === 0 ? <p className="px-3 py-4 text-sm text-zinc-600 dark:text-zinc-400">No audit events match.</p> : null}
    </div>
  );
}
