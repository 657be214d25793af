import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { resultRows } from "@/db/client";
import { windowTotalsOf } from "@/lib/counters/window-totals";
import { PICOS_PER_MICRO } from "@/lib/vocabulary";

// Where daily spend is read from. The endpoint's global utc_day units ceiling counts every caller
// in one row per day; without one, the per-caller utc_day units counters add up to the same total.
// One ceiling is chosen (global first, then the lowest id) so two ceilings never count twice.

export type SpendSource = "global" | "per_caller";

/** Ceiling adjustments that set a value: every one records previous_value and applied_value. */
export const VALUE_ACTIONS = sql`('ceiling.adjust', 'ceiling.kill', 'ceiling.restore', 'ceiling.bounds')`;

/** A `source` CTE body: (endpoint_id, id, scope, value) of the chosen ceiling per endpoint. */
export function sourceCeilings(endpointFilter: SQL): SQL {
  return sql`
    select distinct on (c.endpoint_id) c.endpoint_id, c.id, c.scope, c.value
    from ceilings c
    where c.metric = 'units' and c."window" = 'utc_day' and c.scope in ('global', 'caller') and ${endpointFilter}
    order by c.endpoint_id, (c.scope = 'global') desc, c.id`;
}

/**
 * The CTEs `source` (the endpoint's source ceiling) and `spent` (its units, settled and held, per
 * UTC day from `from` up to `before`): where the daily chart and the month to date both start.
 */
export function sourceSpend(endpointId: number, from: string, before: string, now: Date): SQL {
  // A per-account source ceiling has a counter per account and day: the days' sums come from the
  // worker where it has them (lib/counters/window-totals.ts).
  return sql`source as (${sourceCeilings(sql`c.endpoint_id = ${endpointId}`)}),
      spent as (
        select w.window_start, sum(w.settled + w.held)::bigint as units
        from (${windowTotalsOf("ceiling", sql`array(select id from source)`, { from: new Date(from), to: new Date(before), now })}) w
        group by w.window_start
      )`;
}

/**
 * The CTE `axis`: `days` days from `from`, as day_start numbered i from 0. Intervals in hours are
 * absolute, so the axis never shifts with the session's time zone.
 */
export function dayAxis(from: string, days: number): SQL {
  return sql`axis as (
        select i, ${from}::timestamptz + i * interval '24 hours' as day_start
        from generate_series(0, ${days - 1}::int) as i
      )`;
}

/**
 * The value ceiling `ceilingId` had at instant `at`, from the append-only adjustment log: the
 * last change before it, else what the first change after it replaced, else today's value.
 */
export function valueAt(ceilingId: SQL, currentValue: SQL, at: SQL): SQL {
  return sql`coalesce(
    (select ae.applied_value from audit_events ae
      where ae.ceiling_id = ${ceilingId} and ae.action in ${VALUE_ACTIONS} and ae.at < ${at}
      order by ae.at desc, ae.id desc limit 1),
    (select ae.previous_value from audit_events ae
      where ae.ceiling_id = ${ceilingId} and ae.action in ${VALUE_ACTIONS} and ae.at >= ${at}
      order by ae.at, ae.id limit 1),
    ${currentValue})`;
}

/**
 * The price one unit of endpoint alias `e` is counted at, in picos: its one part's price; for an
 * endpoint of several parts the dearest, since the counters hold units whatever part they were of
 * (every unit could be of the dearest part, so money read this way is at most, never under).
 */
export function unitPricePico(e: SQL): SQL {
  return sql`(select coalesce(max((p->>'pricePico')::bigint), 0) from jsonb_array_elements(${e}.parts) p)`;
}

/** Whether endpoint alias `e` has several priced parts, so its money from units is an upper bound. */
export function pricedByParts(e: SQL): SQL {
  return sql`(jsonb_array_length(${e}.parts) > 1)`;
}

/** Units at a price in picos, as whole micros rounded up (numeric, so nothing overflows on the way). */
export function microsOf(units: SQL, pricePico: SQL): SQL {
  return sql`ceil(${units}::numeric * ${pricePico} / ${PICOS_PER_MICRO})::bigint`;
}

/** Epoch milliseconds of a timestamptz expression, as a bigint every driver returns alike. */
export function epochMs(expr: SQL): SQL {
  return sql`(extract(epoch from ${expr}) * 1000)::bigint`;
}

/** The UTC calendar day of a timestamptz expression as 'YYYY-MM-DD'. */
export function dayText(expr: SQL): SQL {
  return sql`to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD')`;
}

/** Integers come back as strings (int8, numeric) or numbers depending on driver; read both. */
export const Int = z.coerce.number().int().refine(Number.isSafeInteger, "integer beyond 2^53");
export const NullableInt = z.union([z.null(), Int]);

/** Parses raw rows of a db.execute with a zod schema, naming the query on failure. */
export function parseRows<T extends z.ZodType>(label: string, schema: T, result: unknown): z.infer<T>[] {
  const parsed = z.array(schema).safeParse(resultRows(result));
  if (!parsed.success) throw new Error(`${label}: unexpected row shape: ${parsed.error.message}`);
  return parsed.data;
}
