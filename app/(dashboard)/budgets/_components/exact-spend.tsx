import type { BudgetSummary } from "@/lib/budgets";
import { formatMoneyParts } from "@/lib/format";

// Every other amount on a budget's page is in whole cents; this line writes the open window's
// amounts to the micro, as text anyone can read and copy (no hover, no focus needed).

function Exact({ micros, currency }: { micros: number; currency: string }) {
  const money = formatMoneyParts(micros, currency);
  return <data value={money.value}>{money.exact}</data>;
}

type ExactSpendProps = { budget: Pick<BudgetSummary, "settled" | "held" | "value" | "currency" | "scope"> };

/** "$0.956109 settled · $0.010000 held · $0.008333 left of $0.974442"; a per-account budget's are every account's together. */
export function ExactSpend({ budget: b }: ExactSpendProps) {
  const exact = (micros: number) => <Exact micros={micros} currency={b.currency} />;
  const left = b.value - b.settled - b.held;
  return (
    <span className="break-words tabular-nums" data-testid="budget-exact">
      {exact(b.settled)} settled · {exact(b.held)} held
      {b.scope === "account" ? (
        ", every account together"
      ) : left >= 0 ? (
        <>
          {" "}
          · {exact(left)} left of {exact(b.value)}
        </>
      ) : (
        // An overrun may settle past the value: say by how much rather than "0 left".
        <>
          {" "}
          · {exact(-left)} above the value of {exact(b.value)}
        </>
      )}
    </span>
  );
}
