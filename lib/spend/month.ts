import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { billingMonthWindow, utcDayWindow } from "@/lib/limits/windows";
import { SpendNotFoundError } from "./errors";
import { microsOfUnits } from "@/lib/money/price";
import { dayAxis, dayText, Int, NullableInt, parseRows, pricedByParts, sourceCeilings, sourceSpend, unitPricePico, type SpendSource } from "./source";
import { DAY_MS, utcDay } from "@/lib/time";

export const MonthToDateParams = z.object({
  endpointId: z.number().int().positive(),
  now: z.date().optional(),
});
export type MonthToDateParams = z.input<typeof MonthToDateParams>;

export type MonthDay = {
  day: string;
  /** Spend from the start of the billing month to the end of this day; null for days to come. */
  cumulativeUnits: number | null;
  cumulativeMicros: number | null;
  /** allowance × the share of the month gone by at the end of this day; null without an allowance. */
  paceUnits: number | null;
  paceMicros: number | null;
  /** From today on: today's spend plus the average daily spend so far for the time left. */
  projectedUnits: number | null;
  projectedMicros: number | null;
};

export type MonthToDateSpend = {
  endpointId: number;
  unit: string;
  /** The price one unit is counted at, in picos: the one part's, or the dearest of several parts. */
  pricePico: number;
  /** True when the endpoint has several priced parts: every money figure is an upper bound ("at most"). */
  moneyAtMost: boolean;
  currency: string;
  billingDay: number;
  source: SpendSource | null;
  /** First day of the billing month and the first day of the next one, 'YYYY-MM-DD'. */
  start: string;
  end: string;
  allowance: number | null;
  allowanceMicros: number | null;
  spentUnits: number;
  spentMicros: number;
  /** Average spend per elapsed day (the partial day counted by the time gone by), rounded. */
  averageDailyUnits: number;
  /** Spend at the month's end if the average so far holds. */
  projectedUnits: number;
  projectedMicros: number;
  days: MonthDay[];
};

const EndpointRow = z.object({
  unit: z.string(),
  price_pico: Int,
  by_parts: z.boolean(),
  currency: z.string(),
  billing_day: Int,
  plan_allowance: NullableInt,
  source_scope: z.union([z.null(), z.enum(["global", "caller"])]),
});
const DayRow = z.object({
  day: z.string(),
  cumulative: NullableInt,
  pace: NullableInt,
  projected: NullableInt,
  spent: Int,
  average: Int,
  projected_total: Int,
});

/**
 * Cumulative spend per day of the billing month that contains `now` (from the endpoint's billing
 * day), against the plan allowance, with a pace line and a linear projection to the month's end.
 */
export async function monthToDate(db: Db, params: MonthToDateParams): Promise<MonthToDateSpend> {
  const p = MonthToDateParams.parse(params);
  const now = p.now ?? new Date();
  const [endpoint] = parseRows(
    "monthToDate endpoint",
    EndpointRow,
    await db.execute(sql`
      with source as (${sourceCeilings(sql`c.endpoint_id = ${p.endpointId}`)})
      select e.unit, ${unitPricePico(sql`e`)} as price_pico, ${pricedByParts(sql`e`)} as by_parts, e.currency, e.billing_day, e.plan_allowance,
        (select s.scope::text from source s) as source_scope
      from endpoints e where e.id = ${p.endpointId}`),
  );
  if (!endpoint) throw new SpendNotFoundError(`no endpoint with id ${p.endpointId}`);

  const span = billingMonthWindow(now, endpoint.billing_day);
  const monthDays = Math.round((span.end.getTime() - span.start.getTime()) / DAY_MS);
  const from = span.start.toISOString();
  const { start: todayStart, end: tomorrowStart } = utcDayWindow(now);
  const today = todayStart.toISOString();
  // The spend counted runs to the end of today (the source ceiling's windows are UTC days).
  const tomorrow = tomorrowStart.toISOString();
  const nowIso = now.toISOString();
  const monthMs = span.end.getTime() - span.start.getTime();
  // Never divide by zero in the first instant of a month: a minute's spend stands for itself.
  const elapsedMs = Math.max(60_000, now.getTime() - span.start.getTime());

  const rows = parseRows(
    "monthToDate days",
    DayRow,
    await db.execute(sql`
      with ${sourceSpend(p.endpointId, from, tomorrow, now)}, ${dayAxis(from, monthDays)},
      daily as (
        select a.i, a.day_start,
          case when a.day_start <= ${today}::timestamptz then coalesce(sp.units, 0) end as units
        from axis a left join spent sp on sp.window_start = a.day_start
      ),
      running as (
        select d.*,
          case when d.units is not null then sum(d.units) over (order by d.i) end as cumulative,
          coalesce(sum(d.units) over (), 0) as spent
        from daily d
      )
      select ${dayText(sql`r.day_start`)} as day,
        r.cumulative,
        case when ${endpoint.plan_allowance}::bigint is not null
          then round(${endpoint.plan_allowance}::bigint * (r.i + 1)::numeric / ${monthDays}::int) end as pace,
        case
          when r.day_start = ${today}::timestamptz then r.spent
          when r.day_start > ${today}::timestamptz then round(r.spent
            + r.spent * extract(epoch from (r.day_start + interval '24 hours' - ${nowIso}::timestamptz)) * 1000
              / ${elapsedMs}::numeric)
        end as projected,
        r.spent,
        round(r.spent * ${DAY_MS}::numeric / ${elapsedMs}::numeric) as average,
        round(r.spent * ${monthMs}::numeric / ${elapsedMs}::numeric) as projected_total
      from running r
      order by r.i`),
  );

  const price = endpoint.price_pico;
  const money = (n: number | null) => (n === null ? null : microsOfUnits(n, price));
  const head = rows[0];
  const spent = head?.spent ?? 0;
  const projected = head?.projected_total ?? 0;
  return {
    endpointId: p.endpointId,
    unit: endpoint.unit,
    pricePico: price,
    moneyAtMost: endpoint.by_parts,
    currency: endpoint.currency,
    billingDay: endpoint.billing_day,
    source: endpoint.source_scope === null ? null : endpoint.source_scope === "global" ? "global" : "per_caller",
    start: utcDay(span.start.getTime()),
    end: utcDay(span.end.getTime()),
    allowance: endpoint.plan_allowance,
    allowanceMicros: money(endpoint.plan_allowance),
    spentUnits: spent,
    spentMicros: microsOfUnits(spent, price),
    averageDailyUnits: head?.average ?? 0,
    projectedUnits: projected,
    projectedMicros: microsOfUnits(projected, price),
    // Money is units × price per point, rounded up: a pure mapping, the sums were made in SQL.
    days: rows.map((r) => ({
      day: r.day,
      cumulativeUnits: r.cumulative,
      cumulativeMicros: money(r.cumulative),
      paceUnits: r.pace,
      paceMicros: money(r.pace),
      projectedUnits: r.projected,
      projectedMicros: money(r.projected),
    })),
  };
}
