import { z } from "zod";
import { DAY_MS } from "@/lib/time";
import { LIMIT_SOURCES, type LimitSource } from "@/lib/vocabulary";

// What binds one account on one per-caller ceiling or per-account budget is decided in SQL, by
// ceilings.caller_limit and ceilings.account_budget_limit, the rule reserve_batch applies inline
// (a kill or a block binds 0; else the override, else the plan's value, else the own value): the
// page reads the same answer enforcement gives, never a copy of the rule.

export type Binding = { value: number; source: LimitSource };

/** The source a limit function answers: account_budget_limit says "budget" where caller_limit says "ceiling". */
export const LimitSourceColumn = z.preprocess((v) => (v === "budget" ? "ceiling" : v), z.enum(LIMIT_SOURCES));

/**
 * The limit function's answer, except on an endpoint another of whose ceilings is at 0: that
 * endpoint refuses every call (gate kill_switch) before any per-caller limit is read, so the page
 * says kill there too (caller_limit looks at the one ceiling only).
 */
export function bindingOf(p: { value: number; source: LimitSource; endpointKilled?: boolean }): Binding {
  if (p.endpointKilled && p.source !== "kill" && p.source !== "blocked") return { value: 0, source: "kill" };
  return { value: p.value, source: p.source };
}

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
