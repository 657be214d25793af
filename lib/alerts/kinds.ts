import { HOUR_MS, MINUTE_MS } from "@/lib/time";

// Every kind of alert, the words the inbox shows for it, and where it links. Threshold, overrun and
// expiry alerts are fired by the enforcement functions in SQL; the rest by the worker's rules.

export const alertKinds = [
  "threshold",
  // A budget's threshold, fired by reserve_batch like an endpoint's; its kill, restore and large
  // adjustment by the worker's rules. Each names its budget (details.budget) and links to its page.
  "budget_threshold",
  "budget_kill",
  "budget_restore",
  "budget_adjustment",
  "overrun",
  "expiry",
  "kill",
  "restore",
  "adjustment",
  "fail_closed",
  "refusal_spike",
  "drift",
  "worker_silent",
  "digest",
  // Change control (lib/changes): a raise asked for a second admin, a raise applied alone (to every
  // destination), and the timing of raises with an end and of scheduled changes.
  "change_request",
  "break_glass",
  "raise_reverted",
  "revert_skipped",
  "schedule_failed",
  // Reconciliation (lib/reconciliation): a day where the provider billed and Ceilings charged part,
  // and a day whose bill holds money on items no rule maps (a new model, a leaked key).
  "reconciliation",
  "reconciliation_unmapped",
] as const;
export type AlertKind = (typeof alertKinds)[number];

export const alertKindLabels: Record<AlertKind, string> = {
  threshold: "Threshold crossed",
  budget_threshold: "Budget threshold crossed",
  budget_kill: "Budget killed",
  budget_restore: "Budget restored",
  budget_adjustment: "Large budget adjustment",
  overrun: "Overrun",
  expiry: "Reservations expired",
  kill: "Kill switch pulled",
  restore: "Kill switch restored",
  adjustment: "Large adjustment",
  fail_closed: "Fail-closed burst",
  refusal_spike: "Throttle or cooldown spike",
  drift: "Counter drift",
  worker_silent: "Worker silent",
  digest: "Daily digest",
  change_request: "Raise awaiting approval",
  break_glass: "Break glass",
  raise_reverted: "Raise ended",
  revert_skipped: "Raise end skipped",
  schedule_failed: "Scheduled change failed",
  reconciliation: "Ledger and bill disagree",
  reconciliation_unmapped: "Billed on unmapped items",
};

export function isAlertKind(value: string): value is AlertKind {
  return (alertKinds as readonly string[]).includes(value);
}

export type AlertLinkInput = {
  endpointKey: string | null;
  windowStart: Date | null;
  createdAt: Date;
  details: Record<string, unknown> | null;
  /** A reconciliation alert's chart is the endpoint's billed-beside-charged one. */
  kind?: string;
  /** A budget's alert (kind budget_*, details.budget) links to the budget's page instead: its spend chart and its refusals. */
  budgetKey?: string | null;
};

/**
 * Where an alert sends staff: an endpoint's (or budget's) chart and refusals around it, or, for
 * money billed on items no rule maps, the source's unmapped items, each with its Map it button.
 */
export type AlertLinks = { chart: string; refusals: string; mapIt?: undefined } | { mapIt: string; chart?: undefined; refusals?: undefined } | null;

function dateFrom(value: unknown): Date | null {
  if (typeof value !== "string") return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * The endpoint's chart and the refusals around the alert: the alert's window when it has one
 * (threshold, drift), the span a rule counted over when it says so, else the hour before it fired.
 */
export function alertLinks(a: AlertLinkInput): AlertLinks {
  if (a.kind === "reconciliation_unmapped") {
    const sourceId = a.details?.sourceId;
    return typeof sourceId === "number" && Number.isSafeInteger(sourceId) ? { mapIt: `/reconciliation/sources/${sourceId}#unmapped` } : null;
  }
  const budgetKey = a.budgetKey ?? (a.kind?.startsWith("budget_") && typeof a.details?.budget === "string" ? a.details.budget : null);
  if (budgetKey) {
    const page = `/budgets/${encodeURIComponent(budgetKey)}`;
    return { chart: `${page}#spend`, refusals: `${page}#refusals` };
  }
  if (!a.endpointKey) return null;
  const key = encodeURIComponent(a.endpointKey);
  const from = a.windowStart ?? dateFrom(a.details?.from) ?? new Date(a.createdAt.getTime() - HOUR_MS);
  const windowEnd = dateFrom(a.details?.windowEnd) ?? dateFrom(a.details?.to);
  const to = windowEnd && windowEnd.getTime() < a.createdAt.getTime() ? windowEnd : a.createdAt;
  const query = new URLSearchParams({ endpoint: a.endpointKey, from: from.toISOString(), to: new Date(to.getTime() + MINUTE_MS).toISOString() });
  const chart = a.kind === "reconciliation" ? "reconciliation" : "spend";
  return { chart: `/endpoints/${key}#${chart}`, refusals: `/refusals?${query.toString()}` };
}
