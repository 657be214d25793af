import Link from "next/link";
import type { ReactNode } from "react";
import { AccountLink } from "@/components/account-link";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import type { BudgetDetail, MemberShare } from "@/lib/budgets";
import { formatCount, formatDateTime } from "@/lib/format";

type BudgetOverride = BudgetDetail["overrides"]["rows"][number];
type Alert = BudgetDetail["alerts"][number];

// The read side's tables on a budget's page: members, accounts, overrides and alerts.

export function MembersTable({ members, currency }: { members: MemberShare[]; currency: string }) {
  const total = members.reduce((sum, m) => sum + m.money, 0);
  const spec: TableSpec<MemberShare> = {
    testId: "budget-members",
    rowKey: (m) => m.endpointId,
    rowAttributes: (m) => ({ "data-testid": "budget-member", "data-member": m.key }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">This budget has no members.</p>,
    columns: [
      {
        header: "Endpoint",
        cell: (m) => (
          <span className="break-all">
            <Link href={`/endpoints/${encodeURIComponent(m.key)}`} className="font-mono text-xs underline underline-offset-2">
              {m.key}
            </Link>
            {m.archived ? <span className="ml-1 text-xs text-zinc-500">(archived)</span> : null}
          </span>
        ),
      },
      { header: "Name", cell: (m) => m.name },
      { header: "This window", className: "text-right", cellClassName: "tabular-nums", cell: (m) => <Money micros={m.money} currency={currency} /> },
      { header: "Share", className: "text-right", cellClassName: "tabular-nums", cell: (m) => (total > 0 ? `${Math.round((m.money / total) * 100)}%` : "—") },
      { header: "Reservations", className: "text-right", cellClassName: "tabular-nums", cell: (m) => formatCount(m.reservations) },
    ],
  };
  return <DataTable spec={spec} caption="Members and their shares of this window" rows={members} />;
}

type AccountRow = { account: string; spend: number; detail: ReactNode };

export function AccountsTable({ caption, rows, currency, testId }: { caption: string; rows: AccountRow[]; currency: string; testId: string }) {
  const spec: TableSpec<AccountRow> = {
    testId,
    rowKey: (a) => a.account,
    rowAttributes: (a) => ({ "data-testid": "account-row", "data-account": a.account }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">No account has spent here yet.</p>,
    columns: [
      { header: "Account", cell: (a) => <AccountLink account={a.account} /> },
      { header: "Spend", className: "text-right", cellClassName: "tabular-nums", cell: (a) => <Money micros={a.spend} currency={currency} /> },
      // A header a screen reader reads (axe: empty-table-header); sighted readers see the cells say it.
      { header: <span className="sr-only">Detail</span>, label: "Of", cellClassName: "text-xs text-zinc-600 dark:text-zinc-400", cell: (a) => a.detail },
    ],
  };
  return (
    <div className="min-w-0 space-y-2">
      <h3 className="text-sm font-medium">{caption}</h3>
      <DataTable spec={spec} caption={caption} rows={rows} />
    </div>
  );
}

export function OverridesTable({ overrides, currency }: { overrides: { rows: BudgetOverride[]; total: number }; currency: string }) {
  const spec: TableSpec<BudgetOverride> = {
    testId: "budget-overrides",
    rowKey: (o) => o.caller,
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">No account has a value of its own.</p>,
    columns: [
      { header: "Account", cell: (o) => <AccountLink account={o.caller} /> },
      {
        header: "Value",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (o) => (o.value === 0 ? "0 (blocked)" : <Money micros={o.value} currency={currency} />),
      },
      { header: "Reason", cell: (o) => o.reason },
      { header: "Ends", cell: (o) => (o.expiresAt === null ? <span className="text-zinc-600 dark:text-zinc-400">lasts</span> : formatDateTime(o.expiresAt)) },
    ],
  };
  return (
    <div className="min-w-0 space-y-2">
      <h3 className="text-sm font-medium">
        Overrides{overrides.total > overrides.rows.length ? ` (the first ${overrides.rows.length} of ${formatCount(overrides.total)})` : ""}
      </h3>
      <DataTable spec={spec} caption="Per-account values" rows={overrides.rows} />
    </div>
  );
}

export function AlertsList({ alerts }: { alerts: Alert[] }) {
  if (alerts.length === 0) return <p className="text-sm text-zinc-600 dark:text-zinc-400">No alerts for this budget.</p>;
  return (
    <ul className="space-y-2 text-sm" aria-label="Budget alerts">
      {alerts.map((a) => (
        <li key={a.id} className="break-words" data-testid="budget-alert">
          <time className="text-xs tabular-nums text-zinc-600 dark:text-zinc-400" dateTime={a.createdAt.toISOString()}>
            {formatDateTime(a.createdAt)}
          </time>{" "}
          {a.message}
          {a.acknowledgedAt ? <span className="text-xs text-zinc-500"> · acknowledged by {a.acknowledgedBy ?? "unknown"}</span> : null}
        </li>
      ))}
    </ul>
  );
}
