import { z } from "zod";
import { DAY_MS } from "@/lib/time";
import { LIMIT_SOURCES, type LimitSource } from "@/lib/vocabulary";

// What binds one account on one per-caller ceiling or per-account budget is decided in SQL, by
// ceilings.caller_limit and ceilings.account_budget_limit, the rule reserve_batch applies inline
// (a block or a kill binds 0; else the override, else the plan's value, else the own value): the
// page reads the same answer enforcement gives, never a copy of the rule.

export type Binding = { value: number; source: LimitSource };

/** The source a limit function answers: account_budget_limit says "budget" where caller_limit says "ceiling". */
export const LimitSourceColumn = z.preprocess((v) => (v === "budget" ? "ceiling" : v), z.enum(LIMIT_SOURCES));

/** Words for the source, as the account pages print them beside the value. */
export function bindingSourceLabel(source: LimitSource, planKey: string): string {
  switch (source) {
    case "kill":
      return "killed (binds everyone at 0)";
    case "blocked":
      return "blocked (every call refused)";
    case "override":
      return "this account's override";
    case "plan":
      return `plan ${planKey}`;
    case "ceiling":
      return "its own value";
  }
}

/** The first of the 30 UTC days ending with today's: where "the last 30 days" start on the account pages. */
export function thirtyDaysFrom(now: Date): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(midnight - 29 * DAY_MS);
}
