import { DAY_MS } from "@/lib/time";

// What binds one account on one per-caller ceiling or per-account budget, in the order
// reserve_batch applies it: a kill (the ceiling's or budget's value at 0, or another ceiling of
// the endpoint at 0) refuses everyone whatever their own value; otherwise the account's override,
// else its plan's value, else the ceiling's (or budget's) own. The dashboard says which one binds,
// so "why was I refused at 10?" is answered by the row that binds.

/** Where the value that binds comes from. */
export type BindingSource = "killed" | "override" | "plan" | "own";

export type Binding = { value: number; source: BindingSource };

export type BindingInputs = {
  /** The ceiling's (budget's) own value; 0 while killed. */
  own: number;
  /** Another ceiling of the same endpoint is at 0: the endpoint refuses every call (kill_switch). */
  endpointKilled?: boolean;
  /** The value of the account's plan (its assigned plan, else the default plan), if the plan sets one. */
  plan: number | null;
  override: number | null;
};

export function bindingOf(p: BindingInputs): Binding {
  if (p.own === 0 || p.endpointKilled) return { value: 0, source: "killed" };
  if (p.override !== null) return { value: p.override, source: "override" };
  if (p.plan !== null) return { value: p.plan, source: "plan" };
  return { value: p.own, source: "own" };
}

/** Words for the source, as the account page prints them beside the value. */
export function bindingSourceLabel(source: BindingSource, planKey: string): string {
  switch (source) {
    case "killed":
      return "killed (binds everyone at 0)";
    case "override":
      return "this account's override";
    case "plan":
      return `plan ${planKey}`;
    case "own":
      return "its own value";
  }
}

/** The first of the 30 UTC days ending with today's: where "the last 30 days" start on the account pages. */
export function thirtyDaysFrom(now: Date): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(midnight - 29 * DAY_MS);
}
