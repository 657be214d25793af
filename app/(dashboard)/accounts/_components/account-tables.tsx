import Link from "next/link";
import type { ReactNode } from "react";
import { DataTable, type TableSpec } from "@/components/data-table";
import { windowLabel } from "@/components/budget-window";
import { Money } from "@/components/money";
import type { AccountReservation, BudgetBinding, CeilingBinding } from "@/lib/accounts/read";
import { bindingSourceLabel } from "@/lib/accounts/read";
import type { ApiKeySummary } from "@/lib/api-keys/list";
import { formatDateTime, formatUnits, formatUtc } from "@/lib/format";

// The read side's tables on an account's page: what binds it on each per-caller ceiling and
// per-account budget (and why), its reservations and its keys.

const muted = "text-xs text-zinc-600 dark:text-zinc-400";

function ceilingUnit(c: CeilingBinding): string {
  return c.metric === "calls" ? "calls" : c.unit;
}

/** "100 (plan pro)", or "0 (killed ...)": the value that binds and where it comes from. */
function Binds({
  value,
  source,
  planKey,
  format,
}: {
  value: number;
  source: CeilingBinding["binding"]["source"];
  planKey: string;
  format: (n: number) => ReactNode;
}) {
  return (
    <span>
      <span className="tabular-nums font-medium">{format(value)}</span>{" "}
      <span
        className={source === "kill" || source === "blocked" ? "text-xs text-red-700 dark:text-red-400" : muted}
        data-testid="binding-source"
        data-source={source}
      >
        {bindingSourceLabel(source, planKey)}
      </span>
    </span>
  );
}

function Layers({
  own,
  plan,
  override,
  format,
}: {
  own: number;
  plan: number | null;
  override: { value: number; reason: string } | null;
  format: (n: number) => ReactNode;
}) {
  return (
    <span className={muted}>
      own {format(own)} · plan {plan === null ? "sets none" : format(plan)} · override{" "}
      {override === null ? (
        "none"
      ) : (
        <>
          {format(override.value)} ({override.reason})
        </>
      )}
    </span>
  );
}

export function CeilingBindingsTable({ rows, planKey }: { rows: CeilingBinding[]; planKey: string }) {
  const spec: TableSpec<CeilingBinding> = {
    testId: "account-ceilings",
    rowKey: (c) => c.ceilingId,
    rowAttributes: (c) => ({ "data-testid": "account-ceiling", "data-endpoint": c.endpointKey, "data-source": c.binding.source }),
    empty: <p className={`text-sm ${muted}`}>No endpoint has a per-caller ceiling, so no per-account limit applies here.</p>,
    columns: [
      {
        header: "Endpoint",
        cell: (c) => (
          <span className="break-all">
            <Link href={`/endpoints/${encodeURIComponent(c.endpointKey)}`} className="font-mono text-xs underline underline-offset-2">
              {c.endpointKey}
            </Link>
            <span className={`ml-1 ${muted}`}>
              per {windowLabel(c.window === "billing_month" ? "billing_month" : "utc_day")}
              {c.endpointArchived ? ", archived" : ""}
            </span>
          </span>
        ),
      },
      {
        header: "Binds",
        cell: (c) => <Binds value={c.binding.value} source={c.binding.source} planKey={planKey} format={(n) => formatUnits(n, ceilingUnit(c))} />,
      },
      {
        header: "This window",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (c) => `${formatUnits(c.used)}${c.held > 0 ? ` (${formatUnits(c.held)} held)` : ""}`,
      },
      { header: "Left", className: "text-right", cellClassName: "tabular-nums", cell: (c) => formatUnits(c.remaining) },
      {
        header: "30 days",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (c) => (
          <>
            {formatUnits(c.last30.spend)}
            {c.money30 !== null && c.money30 > 0 ? (
              <>
                {" "}
                ≈ {c.upperBound ? "at most " : ""}
                <Money micros={c.money30} currency={c.currency} />
              </>
            ) : null}
          </>
        ),
      },
      { header: "Values", label: "Values", cell: (c) => <Layers own={c.own} plan={c.planValue} override={c.override} format={(n) => formatUnits(n)} /> },
    ],
  };
  return <DataTable spec={spec} caption="Per-caller ceilings: what binds this account" rows={rows} />;
}

export function BudgetBindingsTable({ rows, planKey }: { rows: BudgetBinding[]; planKey: string }) {
  const spec: TableSpec<BudgetBinding> = {
    testId: "account-budgets",
    rowKey: (b) => b.budgetId,
    rowAttributes: (b) => ({ "data-testid": "account-budget", "data-budget": b.key, "data-source": b.binding.source }),
    empty: <p className={`text-sm ${muted}`}>No budget is kept per account.</p>,
    columns: [
      {
        header: "Budget",
        cell: (b) => (
          <span className="break-all">
            <Link href={`/budgets/${encodeURIComponent(b.key)}`} className="font-mono text-xs underline underline-offset-2">
              {b.key}
            </Link>
            <span className={`ml-1 ${muted}`}>
              per {windowLabel(b.window)}
              {b.archived ? ", archived: charges nothing" : ""}
            </span>
          </span>
        ),
      },
      {
        header: "Binds",
        cell: (b) => <Binds value={b.binding.value} source={b.binding.source} planKey={planKey} format={(n) => <Money micros={n} currency={b.currency} />} />,
      },
      {
        header: "This window",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (b) => (
          <>
            <Money micros={b.used} currency={b.currency} />
            {b.held > 0 ? (
              <>
                {" "}
                (<Money micros={b.held} currency={b.currency} /> held)
              </>
            ) : null}
          </>
        ),
      },
      { header: "Left", className: "text-right", cellClassName: "tabular-nums", cell: (b) => <Money micros={b.remaining} currency={b.currency} /> },
      { header: "30 days", className: "text-right", cellClassName: "tabular-nums", cell: (b) => <Money micros={b.last30.spend} currency={b.currency} /> },
      {
        header: "Values",
        label: "Values",
        cell: (b) => <Layers own={b.own} plan={b.planValue} override={b.override} format={(n) => <Money micros={n} currency={b.currency} />} />,
      },
    ],
  };
  return <DataTable spec={spec} caption="Per-account budgets: what binds this account" rows={rows} />;
}

export function ReservationsTable({ rows }: { rows: AccountReservation[] }) {
  const spec: TableSpec<AccountReservation> = {
    testId: "account-reservations",
    rowKey: (r) => r.id,
    rowAttributes: (r) => ({ "data-testid": "account-reservation", "data-state": r.state }),
    empty: (
      <p className={`text-sm ${muted}`} data-testid="account-reservations-empty">
        This account has reserved nothing.
      </p>
    ),
    columns: [
      {
        header: "Created (UTC)",
        cellClassName: "whitespace-nowrap tabular-nums",
        cell: (r) => <time dateTime={r.createdAt.toISOString()}>{formatUtc(r.createdAt).replace(" UTC", "")}</time>,
      },
      { header: "Endpoint", cellClassName: "break-all font-mono text-xs", cell: (r) => r.endpointKey },
      { header: "State", cell: (r) => `${r.state}${r.overrun ? " (overrun)" : ""}` },
      {
        header: "Amount",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (r) => (r.settledAmount !== null ? `${formatUnits(r.settledAmount)} of ${formatUnits(r.amount)}` : formatUnits(r.amount)),
      },
      {
        header: "Money",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (r) => <Money micros={r.settledMoney ?? r.money} currency={r.currency} />,
      },
    ],
  };
  return <DataTable spec={spec} caption="Newest reservations of this account" rows={rows} />;
}

export function ApiKeysTable({ rows }: { rows: ApiKeySummary[] }) {
  const spec: TableSpec<ApiKeySummary> = {
    testId: "account-api-keys",
    rowKey: (k) => k.id,
    empty: (
      <p className={`text-sm ${muted}`} data-testid="account-api-keys-empty">
        No API key spends for this account.
      </p>
    ),
    columns: [
      { header: "Name", cell: (k) => k.name },
      { header: "Prefix", cellClassName: "font-mono text-xs", cell: (k) => k.prefix },
      { header: "Scopes", cellClassName: "font-mono text-xs", cell: (k) => k.scopes.join(", ") },
      { header: "Endpoints", cellClassName: "break-all font-mono text-xs", cell: (k) => k.endpointKeys.join(", ") || "none" },
      { header: "State", cell: (k) => (k.revokedAt ? `revoked ${formatDateTime(k.revokedAt)}` : "live") },
      { header: "Last used", cell: (k) => (k.lastUsedAt ? formatDateTime(k.lastUsedAt) : "never") },
    ],
  };
  return <DataTable spec={spec} caption="API keys bound to this account" rows={rows} />;
}
