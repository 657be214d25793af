import type { BudgetSummary } from "@/lib/budgets";
import { formatCount } from "@/lib/format";
import { BudgetStateBadge } from "@/components/budget-state-badge";
import { BudgetLimitWords, BudgetLink } from "@/components/budget-window";
import { Money } from "@/components/money";
import { MoneyBar } from "@/components/money-bar";

/**
 * Budgets in a few lines each, their spend in the open window: the overview leads with them and
 * each endpoint page lists the budgets it belongs to.
 */
export function BudgetsCompact({ budgets, label }: { budgets: BudgetSummary[]; label: string }) {
  return (
    <ul className="grid gap-3 md:grid-cols-2" aria-label={label}>
      {budgets.map((b) => (
        <li key={b.id} className="min-w-0 space-y-1 rounded-md border border-zinc-200 p-3 text-sm dark:border-zinc-800" data-testid={`budget-${b.key}`}>
          <div className="flex flex-wrap items-start justify-between gap-2">
            <div className="min-w-0">
              <p className="font-medium">
                <BudgetLink budget={b} />
              </p>
              <p className="text-xs text-zinc-600 dark:text-zinc-400">
                <BudgetLimitWords budget={b} />
              </p>
            </div>
            <BudgetStateBadge state={b.state} crossed={b.crossed} />
          </div>
          <CompactSpend budget={b} />
        </li>
      ))}
    </ul>
  );
}

function CompactSpend({ budget: b }: { budget: BudgetSummary }) {
  const money = (n: number) => <Money micros={n} currency={b.currency} />;
  if (b.state === "archived") return <p className="text-xs text-zinc-600 dark:text-zinc-400">Archived: charges and refuses nothing.</p>;
  if (b.scope === "account") {
    return (
      <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="budget-spend" data-spend={b.spend}>
        {money(b.spend)} across {formatCount(b.accounts)} account{b.accounts === 1 ? "" : "s"}
        {b.busiest ? (
          <>
            ; nearest its value: <span className="break-all font-mono">{b.busiest.account}</span> at {money(b.busiest.spend)} of {money(b.busiest.value)}
          </>
        ) : null}
      </p>
    );
  }
  if (b.value === 0)
    return (
      <p className="text-xs text-red-800 dark:text-red-300" data-testid="budget-spend" data-spend={b.spend}>
        Killed: every call on its members is refused.
      </p>
    );
  return (
    <div data-testid="budget-spend" data-spend={b.spend}>
      <MoneyBar settled={b.settled} held={b.held} value={b.value} currency={b.currency} label={`Spend of ${b.key}`} />
    </div>
  );
}
