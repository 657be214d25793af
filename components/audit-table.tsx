import type { ReactNode } from "react";
import type { AuditEvent } from "@/db/schema";
import { auditSubject } from "@/components/audit-subject";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import { formatCount, formatUtc } from "@/lib/format";
import { formatPriceDecimal } from "@/lib/money/price";

/** The value before and after; money (micros) as money when the event names its currency. Null when the event has neither. */
export function valueChange(e: Pick<AuditEvent, "previousValue" | "appliedValue" | "details">): ReactNode {
  if (e.previousValue === null && e.appliedValue === null) return null;
  // A budget's events name their currency (an older budget.create only inside its "after").
  const after = e.details?.after;
  const currency = e.details?.currency ?? (after && typeof after === "object" && "currency" in after ? after.currency : undefined);
  const show = (v: number) => (typeof currency === "string" ? <Money micros={v} currency={currency} /> : formatCount(v));
  return (
    <>
      {e.previousValue === null ? "none" : show(e.previousValue)} → {e.appliedValue === null ? "none" : show(e.appliedValue)}
    </>
  );
}

const isPart = (p: unknown): p is { name: string; pricePico: number } =>
  typeof p === "object" && p !== null && "name" in p && "pricePico" in p && typeof p.name === "string" && typeof p.pricePico === "number";

/** A value as the log shows it; priced parts as their decimals, "input 0.0000025, output 0.00001". */
const shown = (v: unknown): string =>
  typeof v === "number"
    ? formatCount(v)
    : v === null || v === undefined
      ? "none"
      : typeof v === "string"
        ? v
        : Array.isArray(v) && v.length > 0 && v.every(isPart)
          ? v.map((p) => `${p.name} ${formatPriceDecimal(p.pricePico)}`).join(", ")
          : JSON.stringify(v);

/** A catalog change's before and after, from its details: "parts units 0.0079 → units 0.008". */
export function detailChange(e: Pick<AuditEvent, "action" | "details">): string {
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

const auditTable: TableSpec<AuditEvent> = {
  testId: "audit-table",
  rowKey: (e) => e.id,
  rowAttributes: () => ({ "data-testid": "audit-row" }),
  empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">No audit events match.</p>,
  columns: [
    {
      header: "When (UTC)",
      cellClassName: "whitespace-nowrap tabular-nums",
      cell: (e) => <time dateTime={e.at.toISOString()}>{formatUtc(e.at).replace(" UTC", "")}</time>,
    },
    {
      header: "Who",
      cell: (e) => (
        <>
          {e.actor}
          {e.actorType !== "staff" ? <span className="ml-1 text-xs text-zinc-500 dark:text-zinc-400">({e.actorType})</span> : null}
        </>
      ),
    },
    { header: "Kind", cellClassName: "whitespace-nowrap font-mono text-xs", cell: (e) => e.action },
    {
      // Not only endpoints: an API key, a staff member, an alert... named with its kind.
      header: "Subject",
      cell: (e) => {
        const subject = auditSubject(e);
        return subject ? (
          <span data-subject-kind={subject.kind}>
            <span className="text-xs text-zinc-600 dark:text-zinc-400">{subject.kind}</span> <span className="break-all font-mono text-xs">{subject.name}</span>
          </span>
        ) : null;
      },
    },
    { header: "Typed", cellClassName: "font-mono text-xs", cell: (e) => e.rawInput ?? "" },
    { header: "Value", cellClassName: "tabular-nums", cell: (e) => valueChange(e) ?? detailChange(e) },
    { header: "Clamped", cell: (e) => (e.clamped === null ? "" : e.clamped ? "yes" : "no") },
    { header: "Reason", cell: (e) => e.reason ?? <span className="text-zinc-500">no reason given</span> },
  ],
};

export function AuditTable({ events, caption }: { events: AuditEvent[]; caption: string }) {
  return <DataTable spec={auditTable} caption={caption} rows={events} />;
}
