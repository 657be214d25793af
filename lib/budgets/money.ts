// Money typed by a person, and what saving it would do: pure functions shared by the server (which
// decides) and the budget forms (which preview). No database, no React: the browser imports this.

import { ordinal } from "@/lib/limits/guarantee";
import { formatMoney } from "@/lib/format";

/** "llm.a", "llm.a and llm.b", "llm.a, llm.b and llm.c". */
function listOf(keys: readonly string[]): string {
  if (keys.length <= 1) return keys.join("");
  return `${keys.slice(0, -1).join(", ")} and ${keys[keys.length - 1]}`;
}

export type BudgetShape = {
  scope: "global" | "account";
  window: "utc_day" | "billing_month";
  billingDay: number;
  value: number;
  currency: string;
  members: readonly string[];
};

/**
 * A budget's worst case in money, as the sentence the UI and `plan` print: "at most $200.00 a day
 * across llm.gpt-4o, llm.claude-sonnet and llm.embed"; per account "at most $2.00 a day for each
 * account across ...". A killed budget (0) says so.
 */
export function budgetSentence(b: BudgetShape): string {
  const per = b.window === "utc_day" ? "a day" : `a billing month (from the ${ordinal(b.billingDay)})`;
  const who = b.scope === "account" ? " for each account" : "";
  if (b.value === 0) return `nothing${who} across ${listOf(b.members)}: killed, every call on them is refused`;
  return `at most ${formatMoney(b.value, b.currency)} ${per}${who} across ${listOf(b.members)}`;
}
