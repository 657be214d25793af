import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { utcDayWindow } from "@/lib/limits/windows";
import { dayText, Int, microsOf, parseRows, pricedByParts, sourceCeilings, unitPricePico } from "./source";
import { DAY_MS } from "@/lib/time";
import { windowTotalsOf } from "@/lib/counters/window-totals";

export const TREND_DAYS = 14;

export type TrendPoint = { day: string; units: number; moneyMicros: number };

export type EndpointTrend = {
  endpointId: number;
  key: string;
  unit: string;
  currency: string;
  /** True when the endpoint has several priced parts: its money counts every unit at the dearest part, an upper bound. */
  moneyAtMost: boolean;
  points: TrendPoint[];
  totalUnits: number;
  totalMoneyMicros: number;
};

const TrendRow = z.object({
  endpoint_id: Int,
  key: z.string(),
  unit: z.string(),
  currency: z.string(),
  by_parts: z.boolean(),
  points: z.array(z.object({ day: z.string(), units: Int, moneyMicros: Int })),
  total_units: Int,
  total_micros: Int,
});

/**
 * The last 14 UTC days (today included, so far) of every endpoint, for sparklines: one query,
 * days without usage as zeros. Endpoints without a daily units ceiling get a flat line.
 */
export async function overviewTrends(db: Db, opts: { now?: Date } = {}): Promise<Map<number, EndpointTrend>> {
  const now = opts.now ?? new Date();
  const first = utcDayWindow(now).start.getTime() - (TREND_DAYS - 1) * DAY_MS;
  const from = new Date(first).toISOString();
  const to = new Date(first + TREND_DAYS * DAY_MS).toISOString();
  const rows = parseRows(
    "overviewTrends",
    TrendRow,
    await db.execute(sql`
      with source as (${sourceCeilings(sql`true`)}),
      axis as (
        select i, ${from}::timestamptz + i * interval '24 hours' as day_start
        from generate_series(0, ${TREND_DAYS - 1}::int) as i
      ),
      spent as (
        -- Per-account ceilings have a counter per account and day: their days' sums come from the
        -- worker where it has them (lib/counters/window-totals.ts).
        select s.endpoint_id, w.window_start, sum(w.settled + w.held)::bigint as units
        from (${windowTotalsOf("ceiling", sql`array(select id from source)`, { from: new Date(from), to: new Date(to), now })}) w
        join source s on s.id = w.limit_id
        group by s.endpoint_id, w.window_start
      )
      select e.id as endpoint_id, e.key, e.unit, e.currency, ${pricedByParts(sql`e`)} as by_parts,
        json_agg(json_build_object(
          'day', ${dayText(sql`a.day_start`)},
          'units', coalesce(sp.units, 0),
          'moneyMicros', ${microsOf(sql`coalesce(sp.units, 0)`, sql`pr.price_pico`)}
        ) order by a.i) as points,
        sum(coalesce(sp.units, 0)) as total_units,
        ${microsOf(sql`sum(coalesce(sp.units, 0))`, sql`pr.price_pico`)} as total_micros
      from endpoints e
      cross join lateral (select ${unitPricePico(sql`e`)} as price_pico) pr
      cross join axis a
      left join spent sp on sp.endpoint_id = e.id and sp.window_start = a.day_start
      group by e.id, e.key, e.unit, e.currency, e.parts, pr.price_pico
      order by e.key`),
  );
  return new Map(
    rows.map((r) => [
      r.endpoint_id,
      {
        endpointId: r.endpoint_id,
        key: r.key,
        unit: r.unit,
        currency: r.currency,
        moneyAtMost: r.by_parts,
        points: r.points,
        totalUnits: r.total_units,
        totalMoneyMicros: r.total_micros,
      },
    ]),
  );
}
