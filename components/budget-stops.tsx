import Link from "next/link";
import type { BudgetStop } from "@/lib/budgets/read-stops";
import { budgetStopDetail, budgetStopHeadline } from "@/lib/budgets/stop-words";

/**
 * The budgets refusing an endpoint's calls now, each linking to its page: shown instead of "live"
 * on the overview's card and on the endpoint's page, since its own ceilings may have room left.
 */
export function BudgetStops({ stops, now }: { stops: BudgetStop[]; now: Date }) {
  if (stops.length === 0) return null;
  return (
    <ul className="space-y-1 text-sm text-red-800 dark:text-red-300" aria-label="Stopped by budgets">
      {stops.map((s) => (
        <li key={s.budgetId} data-testid="budget-stop" data-budget={s.budget} data-reason={s.reason}>
          <Link href={`/budgets/${encodeURIComponent(s.budget)}`} className="font-semibold underline underline-offset-2">
            {budgetStopHeadline(s, now)}
          </Link>
          <span className="block text-xs">{budgetStopDetail(s, now)}</span>
        </li>
      ))}
    </ul>
  );
}
