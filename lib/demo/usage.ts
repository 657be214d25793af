import { calendarUsageRows, checkWithinCeilings, dailySpend, type SeededEndpoint, type UsageRow } from "./history";
import type { Random } from "./random";
import { type ReservationRow, todaysReservations } from "./today";

/** Every usage counter and today's reservations of one demo endpoint, checked against its ceilings. */
export function demoUsage(ep: SeededEndpoint, now: Date, random: Random): { usage: UsageRow[]; reservations: ReservationRow[] } {
  const days = dailySpend(ep, now, random);
  const baseline = days.pop();
  if (!baseline) throw new Error("demo seed: no history days");
  const t = todaysReservations(ep, baseline, now, random);
  const usage = [...calendarUsageRows(ep, [...days, t.today]), ...t.cooldownUsage];
  checkWithinCeilings(ep, usage);
  return { usage, reservations: t.reservations };
}
