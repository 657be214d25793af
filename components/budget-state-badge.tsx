import type { BudgetState } from "@/lib/budgets/read-view";

const styles: Record<BudgetState, string> = {
  killed: "bg-red-100 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  alerting: "bg-amber-100 text-amber-900 ring-amber-300 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-800",
  live: "bg-emerald-50 text-emerald-800 ring-emerald-200 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-800",
  archived: "bg-zinc-100 text-zinc-700 ring-zinc-300 dark:bg-zinc-800 dark:text-zinc-200 dark:ring-zinc-600",
};

/** A budget's state in words as well as colour; alerting says which threshold it crossed. */
export function BudgetStateBadge({ state, crossed }: { state: BudgetState; crossed?: number | null }) {
  const label = state === "alerting" && crossed != null ? `alerting · ${crossed}%` : state;
  return (
    <span
      data-testid="budget-state"
      data-state={state}
      className={`inline-flex shrink-0 items-center rounded-full px-2 py-0.5 text-xs font-semibold uppercase tracking-wide ring-1 ring-inset ${styles[state]}`}
    >
      {label}
    </span>
  );
}
