import Link from "next/link";
import { AccountLink } from "@/components/account-link";
import { windowLabel } from "@/components/budget-window";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import { secondaryButtonClass, inputClass, labelClass } from "@/components/ui";
import type { Db } from "@/db/client";
import { bindingSourceLabel, topAccounts, topTargetParam, type TopAccountNow, type TopAccountOver, type TopTarget } from "@/lib/accounts/read";
import { WINDOW_TOP } from "@/lib/budgets";
import { formatUnits } from "@/lib/format";

// The Top accounts view: one per-caller ceiling or one per-account budget at a time, chosen in a
// plain GET form (it works before hydration, and each view is a link to share).

/** Rows in each of the two tables. */
const TOP_LIMIT = 10;

function targetLabel(t: TopTarget): string {
  if (t.kind === "ceiling")
    return `${t.endpointKey}: ${t.metric === "calls" ? "calls" : t.unit} per ${windowLabel(t.window === "billing_month" ? "billing_month" : "utc_day")} per account`;
  return `Budget ${t.key}: ${t.currency} per ${windowLabel(t.window)} per account`;
}

type ViewProps = { db: Db; targets: TopTarget[]; target: TopTarget; now: Date; q: string; exact: boolean };

function exactHref(target: TopTarget, q: string): string {
  const p = new URLSearchParams({ top: topTargetParam(target), exact: "1" });
  if (q) p.set("q", q);
  return `/accounts?${p.toString()}`;
}

export async function TopAccountsView({ db, targets, target, now, q, exact }: ViewProps) {
  const top = await topAccounts(db, { target, now, limit: TOP_LIMIT, exhaustive: exact });
  const amount = (n: number) =>
    target.kind === "budget" ? <Money micros={n} currency={target.currency} /> : formatUnits(n, target.metric === "calls" ? "calls" : target.unit);
  const nowSpec: TableSpec<TopAccountNow> = {
    testId: "top-accounts-now",
    rowKey: (r) => r.account,
    rowAttributes: (r) => ({ "data-testid": "top-account", "data-account": r.account }),
    empty: (
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        No account has settled anything here this {windowLabel(target.window === "billing_month" ? "billing_month" : "utc_day")}.
      </p>
    ),
    columns: [
      { header: "Account", cell: (r) => <AccountLink account={r.account} /> },
      {
        header: "Settled",
        className: "text-right",
        cellClassName: "tabular-nums",
        cell: (r) => (
          <>
            {amount(r.settled)}
            {r.held > 0 ? <> (+{amount(r.held)} held)</> : null}
          </>
        ),
      },
      {
        header: "Binds",
        cell: (r) => (
          <>
            {amount(r.binding.value)}, {bindingSourceLabel(r.binding.source, r.planKey ?? "default")}
          </>
        ),
      },
    ],
  };
  const overSpec: TableSpec<TopAccountOver> = {
    testId: "top-accounts-30",
    rowKey: (r) => r.account,
    rowAttributes: (r) => ({ "data-testid": "top-account-30", "data-account": r.account }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">No account has settled anything here in the last 30 days.</p>,
    columns: [
      { header: "Account", cell: (r) => <AccountLink account={r.account} /> },
      { header: "Settled", className: "text-right", cellClassName: "tabular-nums", cell: (r) => amount(r.settled) },
      { header: "Windows", className: "text-right", cellClassName: "tabular-nums", cell: (r) => String(r.windows) },
    ],
  };
  return (
    <div className="space-y-4">
      <form method="get" action="/accounts" className="flex flex-wrap items-end gap-3" aria-label="Choose what to rank accounts by">
        {q ? <input type="hidden" name="q" value={q} /> : null}
        <div className="min-w-0 flex-1 basis-64">
          <label htmlFor="top-target" className={labelClass}>
            Endpoint or budget
          </label>
          <select id="top-target" name="top" defaultValue={topTargetParam(target)} className={inputClass} data-testid="top-target">
            {targets.map((t) => (
              <option key={topTargetParam(t)} value={topTargetParam(t)}>
                {targetLabel(t)}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className={secondaryButtonClass} data-testid="top-target-show">
          Show
        </button>
      </form>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Ranked by what each account settled (held is in flight for the length of a call), this window from{" "}
        {top.span.start.toISOString().slice(0, 16).replace("T", " ")} UTC and over the 30 UTC days since {top.since.toISOString().slice(0, 10)}.
      </p>
      <div className="grid gap-4 lg:grid-cols-2">
        <div className="min-w-0 space-y-2">
          <h3 className="text-sm font-medium">This {windowLabel(target.window === "billing_month" ? "billing_month" : "utc_day")}</h3>
          <DataTable spec={nowSpec} caption={`Top accounts this window: ${targetLabel(target)}`} rows={top.now} />
        </div>
        <div className="min-w-0 space-y-2">
          <h3 className="text-sm font-medium">Last 30 days</h3>
          {top.over30Read.read === "unproved" ? (
            <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="top-accounts-30-unproved">
              Ranked among each day&apos;s {WINDOW_TOP} busiest accounts, with their exact totals: spend is spread over many accounts, so one outside every
              day&apos;s top could have settled up to {amount(top.over30Read.bound)}.{" "}
              <Link href={exactHref(target, q)} className="underline underline-offset-2">
                Rank every account (slower)
              </Link>
            </p>
          ) : null}
          <DataTable spec={overSpec} caption={`Top accounts over 30 days: ${targetLabel(target)}`} rows={top.over30} />
        </div>
      </div>
    </div>
  );
}
