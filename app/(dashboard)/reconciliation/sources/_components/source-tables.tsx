import Link from "next/link";
import { runAction } from "@/app/(dashboard)/actions";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import { formatCount, formatDateTime } from "@/lib/format";
import type { RawUsageRow, UnmappedItem, UsagePullView, UsageRuleView } from "@/lib/reconciliation/sources";

// The tables of a source's page. Each scrolls in its own box (DataTable); on a phone a row is a card.

const removeRuleAction = runAction.bind(null, "usage_rule.remove");
const muted = "text-zinc-600 dark:text-zinc-400";

function TargetLink({ endpointKey, budgetKey }: { endpointKey: string | null; budgetKey: string | null }) {
  if (endpointKey)
    return (
      <Link href={`/endpoints/${encodeURIComponent(endpointKey)}`} className="break-all font-mono underline underline-offset-2">
        {endpointKey}
      </Link>
    );
  if (budgetKey)
    return (
      <span>
        budget{" "}
        <Link href={`/budgets/${encodeURIComponent(budgetKey)}`} className="break-all font-mono underline underline-offset-2">
          {budgetKey}
        </Link>
      </span>
    );
  return <span className={muted}>unmapped</span>;
}

const cost = (micros: number | null, currency: string) =>
  micros === null ? <span className={muted}>not reported</span> : <Money micros={micros} currency={currency} />;

export function RulesTable({ rules, sourceId, isAdmin }: { rules: UsageRuleView[]; sourceId: number; isAdmin: boolean }) {
  const spec: TableSpec<UsageRuleView> = {
    testId: "rules-table",
    rowKey: (r) => r.id,
    rowAttributes: (r) => ({ "data-match": r.match }),
    empty: <p className={`text-sm ${muted}`}>No rules yet: every item this source reports is unmapped, so nothing is compared. Add one below.</p>,
    columns: [
      { header: "Provider item", cell: (r) => <span className="break-all font-mono">{r.match}</span> },
      { header: "Counts for", cell: (r) => <TargetLink endpointKey={r.endpointKey} budgetKey={r.budgetKey} /> },
      {
        header: "Part",
        cell: (r) => (
          <span>
            {r.part ?? (r.endpointKey ? <span className={muted}>first</span> : "")}
            {Object.entries(r.fieldParts).map(([field, part]) => (
              <span key={field} className={`block text-xs ${muted}`}>
                {field} at {part}
              </span>
            ))}
          </span>
        ),
      },
      {
        header: "Added",
        cell: (r) => (
          <span className={muted}>
            {r.createdBy}, {formatDateTime(r.createdAt)}
          </span>
        ),
      },
      ...(isAdmin
        ? [
            {
              header: <span className="sr-only">Remove</span>,
              label: "Remove",
              cell: (r: UsageRuleView) => (
                <AlertsActionForm
                  action={removeRuleAction}
                  fields={{ sourceId, ruleId: r.id }}
                  label="Remove"
                  pendingLabel="Removing…"
                  tone="danger"
                  confirm={`Remove the rule '${r.match}'? Its items count as unmapped from the next pull.`}
                  testId={`remove-rule-${r.id}`}
                />
              ),
            },
          ]
        : []),
    ],
  };
  return <DataTable spec={spec} caption="Rules of this source" rows={rules} />;
}

export function PullsTable({ pulls, path, shownDay }: { pulls: UsagePullView[]; path: string; shownDay: string | null }) {
  const spec: TableSpec<UsagePullView> = {
    testId: "pulls-table",
    rowKey: (p) => p.day,
    rowAttributes: (p) => ({ "data-day": p.day, className: p.day === shownDay ? "bg-zinc-50 dark:bg-zinc-800/50" : undefined }),
    empty: <p className={`text-sm ${muted}`}>Nothing pulled yet.</p>,
    columns: [
      {
        header: "Provider day",
        cell: (p) => (
          <Link href={`${path}?day=${p.day}#raw`} className="font-mono underline underline-offset-2">
            {p.day}
          </Link>
        ),
      },
      { header: "Pulled", cell: (p) => formatDateTime(p.pulledAt) },
      { header: "Via", cell: (p) => p.via },
      { header: "Rows", className: "text-right", cell: (p) => formatCount(p.rows) },
      {
        header: "Unmapped",
        className: "text-right",
        cell: (p) => (p.unmappedRows > 0 ? <span className="font-medium text-amber-800 dark:text-amber-300">{formatCount(p.unmappedRows)}</span> : "0"),
      },
    ],
  };
  return <DataTable spec={spec} caption="Recent pulled days, newest first" rows={pulls} />;
}

export function UnmappedTable({ items, currency, path, isAdmin }: { items: UnmappedItem[]; currency: string; path: string; isAdmin: boolean }) {
  const spec: TableSpec<UnmappedItem> = {
    testId: "unmapped-table",
    rowKey: (u) => u.item,
    rowAttributes: (u) => ({ "data-item": u.item }),
    empty: <p className={`text-sm ${muted}`}>Every item of the last 30 days is mapped.</p>,
    columns: [
      { header: "Provider item", cell: (u) => <span className="break-all font-mono">{u.item}</span> },
      { header: "Rows", className: "text-right", cell: (u) => formatCount(u.rows) },
      { header: "Units", className: "text-right", cell: (u) => `${formatCount(u.units)}${u.unit ? ` ${u.unit}` : ""}` },
      { header: "Cost", className: "text-right", cell: (u) => cost(u.costMicros, currency) },
      { header: "Last day", cell: (u) => <span className="font-mono">{u.lastDay}</span> },
      ...(isAdmin
        ? [
            {
              header: <span className="sr-only">Map</span>,
              label: "Map",
              cell: (u: UnmappedItem) => (
                <Link href={`${path}?map=${encodeURIComponent(u.item)}#add-rule`} className="underline underline-offset-2" data-testid="map-it">
                  Map it
                </Link>
              ),
            },
          ]
        : []),
    ],
  };
  return <DataTable spec={spec} caption="Items no rule maps, last 30 days" rows={items} />;
}

export function RawRowsTable({ rows, currency }: { rows: RawUsageRow[]; currency: string }) {
  const spec: TableSpec<RawUsageRow> = {
    testId: "raw-rows-table",
    rowKey: (r) => r.id,
    empty: <p className={`text-sm ${muted}`}>No rows that day: the provider reported nothing.</p>,
    columns: [
      { header: "Provider item", cell: (r) => <span className="break-all font-mono">{r.item}</span> },
      { header: "Field", cell: (r) => (r.field ? <span className="font-mono">{r.field}</span> : "") },
      { header: "Units", className: "text-right", cell: (r) => `${formatCount(r.units)}${r.unit ? ` ${r.unit}` : ""}` },
      { header: "Cost", className: "text-right", cell: (r) => cost(r.costMicros, currency) },
      {
        header: "Counts for",
        cell: (r) =>
          r.rollup ? (
            <span className={muted}>roll-up: billed through its leaves</span>
          ) : (
            <span>
              <TargetLink endpointKey={r.endpointKey} budgetKey={r.budgetKey} />
              {r.endpointKey && r.part && r.costMicros === null ? <span className={`block text-xs ${muted}`}>priced at {r.part}</span> : null}
            </span>
          ),
      },
      { header: "As reported", cell: (r) => <code className="block max-w-md break-all text-xs">{JSON.stringify(r.raw).slice(0, 300)}</code> },
    ],
  };
  return <DataTable spec={spec} caption="Raw rows of the day, as the provider reported them" rows={rows} />;
}
