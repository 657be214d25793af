import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { utcDayWindow } from "@/lib/limits/windows";
import { microsOfUnits } from "@/lib/money/price";
import {
  dayAxis,
  dayText,
  epochMs,
  Int,
  microsOf,
  NullableInt,
  parseRows,
  pricedByParts,
  sourceCeilings,
  sourceSpend,
  unitPricePico,
  VALUE_ACTIONS,
  valueAt,
  type SpendSource,
} from "./source";
import { SpendNotFoundError } from "./errors";
import { DAY_MS } from "@/lib/time";

export const DailySpendParams = z.object({
  endpointId: z.number().int().positive(),
  days: z.union([z.literal(30), z.literal(90)]),
  /** The instant the range ends at (today included); tests pin it. */
  now: z.date().optional(),
});
export type DailySpendParams = z.input<typeof DailySpendParams>;

export type SpendDay = {
  /** UTC calendar day, 'YYYY-MM-DD'. */
  day: string;
  units: number;
  /** units × the unit's price (pricePico), in millionths of the currency, rounded up to a whole micro. */
  moneyMicros: number;
  /**
   * The daily ceiling in force at the END of the day (after that day's changes), for the step
   * line; null when spend is read from per-caller counters, whose ceiling is not a daily total.
   */
  ceiling: number | null;
  /** The value in force at the start of the day, so a day whose value changed can say from what. */
  ceilingAtStart: number | null;
  /** Value changes logged during the day. */
  ceilingChanges: number;
};

/** A stretch of time during which at least one ceiling of the endpoint was at 0: killed. */
export type KillPeriod = {
  /** Epoch ms, clipped to the start of the range. */
  start: number;
  /** Epoch ms; null while still killed. */
  end: number | null;
};

export type DailySpend = {
  endpointId: number;
  unit: string;
  /** The price one unit is counted at, in picos: the one part's, or the dearest of several parts. */
  pricePico: number;
  /** True when the endpoint has several priced parts: its money counts every unit at the dearest part, an upper bound ("at most"). */
  moneyAtMost: boolean;
  currency: string;
  source: SpendSource | null;
  days: SpendDay[];
  kills: KillPeriod[];
  totalUnits: number;
  totalMoneyMicros: number;
};

const DayRow = z.object({
  day: z.string(),
  units: Int,
  money_micros: Int,
  ceiling_end: NullableInt,
  ceiling_start: NullableInt,
  changes: Int,
  total_units: Int,
});
const KillRow = z.object({ start_ms: Int, end_ms: NullableInt });
const EndpointRow = z.object({
  unit: z.string(),
  price_pico: Int,
  by_parts: z.boolean(),
  currency: z.string(),
  source_scope: z.union([z.null(), z.enum(["global", "caller"])]),
});

/**
 * Units and money per UTC day over the last 30 or 90 days (today included, so far), with the daily
 * ceiling reconstructed from the adjustment log and the kill periods, aggregated in SQL.
 */
export async function dailySpend(db: Db, params: DailySpendParams): Promise<DailySpend> {
  const p = DailySpendParams.parse(params);
  const now = p.now ?? new Date();
  const first = utcDayWindow(now).start.getTime() - (p.days - 1) * DAY_MS;
  const from = new Date(first).toISOString();
  const to = new Date(first + p.days * DAY_MS).toISOString();

  const [endpoint] = parseRows(
    "dailySpend endpoint",
    EndpointRow,
    await db.execute(sql`
      with source as (${sourceCeilings(sql`c.endpoint_id = ${p.endpointId}`)})
      select e.unit, ${unitPricePico(sql`e`)} as price_pico, ${pricedByParts(sql`e`)} as by_parts, e.currency, (select s.scope::text from source s) as source_scope
      from endpoints e where e.id = ${p.endpointId}`),
  );
  if (!endpoint) throw new SpendNotFoundError(`no endpoint with id ${p.endpointId}`);

  const dayStart = sql`a.day_start`;
  const dayEnd = sql`(a.day_start + interval '24 hours')`;
  const days = parseRows(
    "dailySpend days",
    DayRow,
    await db.execute(sql`
      with ${sourceSpend(p.endpointId, from, to, now)}, ${dayAxis(from, p.days)}
      select ${dayText(dayStart)} as day,
        coalesce(sp.units, 0) as units,
        ${microsOf(sql`coalesce(sp.units, 0)`, sql`${endpoint.price_pico}::bigint`)} as money_micros,
        sum(coalesce(sp.units, 0)) over () as total_units,
        case when s.scope = 'global' then ${valueAt(sql`s.id`, sql`s.value`, dayEnd)} end as ceiling_end,
        case when s.scope = 'global' then ${valueAt(sql`s.id`, sql`s.value`, dayStart)} end as ceiling_start,
        (select count(*) from audit_events ae
          where s.scope = 'global' and ae.ceiling_id = s.id and ae.action in ${VALUE_ACTIONS}
            and ae.at >= ${dayStart} and ae.at < ${dayEnd}
            and ae.applied_value is distinct from ae.previous_value) as changes
      from axis a
      join endpoints e on e.id = ${p.endpointId}
      left join source s on true
      left join spent sp on sp.window_start = a.day_start
      order by a.day_start`),
  );

  const kills = parseRows("dailySpend kills", KillRow, await db.execute(killPeriodsQuery(p.endpointId, from, now.toISOString())));

  return {
    endpointId: p.endpointId,
    unit: endpoint.unit,
    pricePico: endpoint.price_pico,
    moneyAtMost: endpoint.by_parts,
    currency: endpoint.currency,
    source: endpoint.source_scope === null ? null : endpoint.source_scope === "global" ? "global" : "per_caller",
    days: days.map((d) => ({
      day: d.day,
      units: d.units,
      moneyMicros: d.money_micros,
      ceiling: d.ceiling_end,
      ceilingAtStart: d.ceiling_start,
      ceilingChanges: d.changes,
    })),
    kills: kills.map((k) => ({ start: k.start_ms, end: k.end_ms })),
    totalUnits: days[0]?.total_units ?? 0,
    totalMoneyMicros: microsOfUnits(days[0]?.total_units ?? 0, endpoint.price_pico),
  };
}

/**
 * Kill periods overlapping [from, now): the kill switch refuses while ANY ceiling of the endpoint
 * is at 0, so the stretches where some ceiling sat at 0 (after a kill, or an adjustment to 0) are
 * merged across ceilings (gaps and islands). Ceilings deleted since are left out.
 */
function killPeriodsQuery(endpointId: number, from: string, now: string) {
  return sql`
    with ev as (
      select ae.at, ae.applied_value,
        lead(ae.at) over (partition by ae.ceiling_id order by ae.at, ae.id) as next_at
      from audit_events ae join ceilings c on c.id = ae.ceiling_id
      where c.endpoint_id = ${endpointId} and ae.action in ${VALUE_ACTIONS}
    ),
    zero as (
      select at as start_at, coalesce(next_at, 'infinity'::timestamptz) as end_at
      from ev where applied_value = 0
    ),
    ordered as (
      select start_at, end_at,
        max(end_at) over (order by start_at, end_at rows between unbounded preceding and 1 preceding) as reach
      from zero
    ),
    islands as (
      select start_at, end_at,
        count(*) filter (where reach is null or start_at > reach) over (order by start_at, end_at) as grp
      from ordered
    ),
    merged as (select min(start_at) as start_at, max(end_at) as end_at from islands group by grp)
    select ${epochMs(sql`greatest(start_at, ${from}::timestamptz)`)} as start_ms,
      case when end_at = 'infinity' then null else ${epochMs(sql`end_at`)} end as end_ms
    from merged
    where end_at > ${from}::timestamptz and start_at < ${now}::timestamptz
    order by start_at`;
}
