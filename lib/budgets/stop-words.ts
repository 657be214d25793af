import { formatAgo, formatInstant, formatMoney } from "@/lib/format";
import { DAY_MS } from "@/lib/time";
import type { BudgetStop } from "./read-stops";

// A budget stopping an endpoint, in the words the overview and the endpoint page show: the
// headline ("Stopped by budget llm-daily (killed)") and the sentence that says until when.

/** "00:00 UTC" within the next day, else "Dec 15, 00:00 UTC". */
function untilWords(until: Date, now: Date): string {
  return until.getTime() - now.getTime() <= DAY_MS ? `${until.toISOString().slice(11, 16)} UTC` : formatInstant(until.getTime());
}

export function budgetStopHeadline(stop: BudgetStop, now: Date): string {
  if (stop.reason === "killed") return `Stopped by budget ${stop.budget} (killed)`;
  return `Stopped by budget ${stop.budget} (${stop.heldMayFree ? "full" : "exhausted"} until ${untilWords(stop.until, now)})`;
}

export function budgetStopDetail(stop: BudgetStop, now: Date): string {
  if (stop.reason === "killed") {
    const when = stop.killedAt ? ` ${formatAgo(stop.killedAt, now)}` : "";
    return `Killed${when} by ${stop.killedBy ?? "unknown"}: every call is refused (gate budget) until the budget is restored.`;
  }
  const money = (m: number) => formatMoney(m, stop.currency);
  const spent = `${money(stop.settled + stop.held)} of ${money(stop.value)} spent or held this window`;
  return stop.heldMayFree
    ? `${spent} (${money(stop.held)} held): every call that costs money is refused until the window ends, unless held reservations settle lower or are released.`
    : `${spent}: every call that costs money is refused until the window ends.`;
}
