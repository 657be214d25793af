import type { Db } from "@/db/client";
import { dailySpend, type DailySpend } from "./daily";
import { monthToDate, type MonthToDateSpend } from "./month";

export type EndpointSpendCharts = { daily: { 30: DailySpend; 90: DailySpend }; month: MonthToDateSpend };

/** Everything the endpoint page's spend charts show, read at one instant so the charts agree. */
export async function endpointSpendCharts(db: Db, p: { endpointId: number; now?: Date }): Promise<EndpointSpendCharts> {
  const now = p.now ?? new Date();
  const [d30, d90, month] = await Promise.all([
    dailySpend(db, { endpointId: p.endpointId, days: 30, now }),
    dailySpend(db, { endpointId: p.endpointId, days: 90, now }),
    monthToDate(db, { endpointId: p.endpointId, now }),
  ]);
  return { daily: { 30: d30, 90: d90 }, month };
}
