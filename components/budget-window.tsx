import Link from "next/link";
import { AccountLink } from "@/components/account-link";
import type { BudgetOverview } from "@/lib/budgets";
import { formatAgo, formatCount, formatPercent, formatUtc } from "@/lib/format";
import { BudgetSharesChart } from "@/components/charts/budget-shares-chart";
import { Money } from "@/components/money";
import { MoneyBar } from "@/components/money-bar";

// A budget in its open window: spend against the value, members' shares, pace and projection,
// and for a per-account budget its top accounts. Shown on the Budgets page and on a budget's page.

export function windowLabel(window: BudgetOverview["window"]): string {
  return window === "utc_day" ? "UTC day" : "billing month";
}

/** "at most $200.00 per UTC day" or "at most $2.00 per UTC day for each account". */
export function BudgetLimitWords({ budget: b }: { budget: Pick<BudgetOverview, "value" | "currency" | "window" | "scope"> }) {
  return (
    <>
      at most <Money micros={b.value} currency={b.currency} /> per {windowLabel(b.window)}
      {b.scope === "account" ? " for each account" : ""}
    </>
  );
}

export function BudgetWindow({ budget: b, now, showAccounts = true }: { budget: BudgetOverview; now: Date; showAccounts?: boolean }) {
  const money = (n: number) => <Money micros={n} currency={b.currency} />;
  const perAccount = b.scope === "account";
  return (
    <div className="min-w-0 space-y-3 text-sm">
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        Window {formatUtc(b.span.start).replace(" UTC", "")} → {formatUtc(b.span.end)} · {formatPercent(b.progress.elapsed)} elapsed
      </p>
      {b.state === "archived" ? (
        <p className="text-zinc-700 dark:text-zinc-300">
          Archived{b.archivedAt ? ` ${formatAgo(b.archivedAt, now)}` : ""} by {b.archivedBy ?? "unknown"}: it charges and refuses nothing; its history stays.
        </p>
      ) : null}
      {b.state === "killed" ? (
        <p className="text-red-800 dark:text-red-300" data-testid="budget-killed">
          Killed{b.killedAt ? ` ${formatAgo(b.killedAt, now)}` : ""} by {b.killedBy ?? "unknown"}: every call on its members is refused. Restore puts back{" "}
          {money(b.valueBeforeKill ?? b.defaultValue)}.
        </p>
      ) : null}
      {perAccount ? (
        <p data-testid="budget-spend" data-spend={b.spend}>
          <Money micros={b.spend} currency={b.currency} className="font-medium" /> spent or held by {formatCount(b.accounts)} account
          {b.accounts === 1 ? "" : "s"} together in this window. The value, {money(b.value)}, is <strong>each account&apos;s</strong>
          {b.state === "killed" ? "" : " (or its override)"}.
        </p>
      ) : b.value > 0 ? (
        <div data-testid="budget-spend" data-spend={b.spend}>
          <MoneyBar settled={b.settled} held={b.held} value={b.value} currency={b.currency} label={`Spend of ${b.key}`} />
        </div>
      ) : (
        <p data-testid="budget-spend" data-spend={b.spend}>
          {money(b.spend)} spent or held in this window.
        </p>
      )}
      <BudgetSharesChart
        members={b.members.map((m) => ({ key: m.key, money: m.money }))}
        currency={b.currency}
        value={perAccount ? null : b.value}
        spend={b.spend}
      />
      <Pace budget={b} />
      {perAccount && showAccounts ? <TopAccountsNow budget={b} /> : null}
    </div>
  );
}

function Pace({ budget: b }: { budget: BudgetOverview }) {
  const money = (n: number) => <Money micros={n} currency={b.currency} />;
  if (b.state === "archived" || b.state === "killed") return null;
  const projection = b.progress.projection;
  if (b.scope === "account") {
    const busy = b.busiest;
    return (
      <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="budget-pace">
        {busy ? (
          <>
            Nearest its value: <span className="break-all font-mono">{busy.account}</span>, {money(busy.spend)} of {money(busy.value)}
            {busy.projection === null ? null : <>, projected {money(busy.projection)} by the window&apos;s end</>}.{" "}
          </>
        ) : null}
        Even pace for one account by now: {money(b.progress.pace)}.
        {projection === null ? " Too early in the window to project." : <> Every account together, projected: {money(projection)}.</>}
      </p>
    );
  }
  return (
    <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="budget-pace">
      Even pace by now: {money(b.progress.pace)}.{" "}
      {projection === null ? (
        "Too early in the window to project."
      ) : (
        <>
          Projected by the window&apos;s end: {money(projection)}
          {projection > b.value ? ", above the value: it will refuse before then" : ", within the value"}.
        </>
      )}
    </p>
  );
}

function TopAccountsNow({ budget: b }: { budget: BudgetOverview }) {
  if (b.topAccounts.length === 0) return <p className="text-xs text-zinc-600 dark:text-zinc-400">No account has spent in this window yet.</p>;
  return (
    <div className="space-y-2">
      <p className="text-xs font-medium">Accounts that settled most in this window, each against its own value</p>
      <ul className="space-y-2" aria-label={`Top accounts of ${b.key}`}>
        {b.topAccounts.map((a) => (
          <li key={a.account} className="min-w-0" data-testid="top-account" data-account={a.account}>
            <p className="break-all font-mono text-xs">
              <AccountLink account={a.account} />
            </p>
            {a.value === 0 ? (
              <p className="text-xs text-red-800 dark:text-red-300">
                Blocked by an override of 0 · <Money micros={a.spend} currency={b.currency} /> before it
              </p>
            ) : (
              <MoneyBar settled={a.settled} held={a.held} value={a.value} currency={b.currency} label={`${a.account} in ${b.key}`} />
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The budget's name linking to its page. */
export function BudgetLink({ budget: b }: { budget: Pick<BudgetOverview, "key" | "name"> }) {
  return (
    <Link href={`/budgets/${encodeURIComponent(b.key)}`} className="break-all underline-offset-2 hover:underline">
      {b.name}
    </Link>
  );
}
