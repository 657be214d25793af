import { createHash } from "node:crypto";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { usageRows } from "@/db/schema";
import { fireAlert } from "@/lib/alerts/fire";
import { formatMoney } from "@/lib/format";
import type { ProviderDay, UsageSource } from "./types";

// Money billed on items no rule maps: a model a team started using, a key leaked and used on
// another model. Compared per source and provider day with the source's unmapped threshold ($1 by
// default) and alerted once for that day (reconciliation_unmapped, whatever the number of pulls or
// workers), naming the items and linking to the source's unmapped items and their Map it button.
// Roll-up rows (Twilio's "sms") are not items: their leaves are.

export type UnmappedDayItem = { item: string; micros: number; units: number };
export type UnmappedDay = { day: ProviderDay; micros: number; items: UnmappedDayItem[] };

/** How many items an alert names; the rest are counted ("and 4 more"). */
const NAMED_ITEMS = 5;

/**
 * Once per source, day and set of items billing money: pulled again with the same items, the day
 * stays alerted once; a new item on a day already alerted (a second model nobody mapped, seen by a
 * later pull) alerts again, naming it.
 */
export function unmappedDedupeKey(sourceId: number, day: ProviderDay, items: readonly string[]): string {
  const set = createHash("sha256")
    .update([...new Set(items)].sort().join("\u0000"))
    .digest("hex")
    .slice(0, 16);
  return `reconciliation_unmapped:${sourceId}:${day}:${set}`;
}

/** The money on unmapped items of each of the days, the costliest items first. */
export async function unmappedDays(db: Db, sourceId: number, days: readonly ProviderDay[]): Promise<UnmappedDay[]> {
  if (days.length === 0) return [];
  const rows = await db
    .select({
      day: usageRows.day,
      item: usageRows.item,
      micros: sql<number>`coalesce(sum(${usageRows.costMicros}), 0)::float8`,
      units: sql<number>`sum(${usageRows.units})::float8`,
    })
    .from(usageRows)
    .where(
      and(
        eq(usageRows.sourceId, sourceId),
        inArray(usageRows.day, [...days]),
        isNull(usageRows.endpointId),
        isNull(usageRows.budgetId),
        eq(usageRows.rollup, false),
      ),
    )
    .groupBy(usageRows.day, usageRows.item);
  const byDay = new Map<ProviderDay, UnmappedDayItem[]>();
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), { item: r.item, micros: r.micros, units: r.units }]);
  return [...byDay.entries()]
    .map(([day, items]) => ({ day, micros: billedOn(items), items: items.sort((a, b) => b.micros - a.micros || a.item.localeCompare(b.item)) }))
    .sort((a, b) => a.day.localeCompare(b.day));
}

/**
 * The money billed on unmapped items: each item's own, credits left out. A credit (FOCUS's
 * Credit rows, negative) is not an item that spends, and netting it would let a large credit hide a
 * new model's spend from the alert.
 */
export function billedOn(items: readonly { micros: number }[]): number {
  return items.reduce((n, i) => n + Math.max(i.micros, 0), 0);
}

/** Over the source's unmapped threshold: some money, and at least the threshold (0: any money). */
export function unmappedOver(micros: number, thresholdMicros: number): boolean {
  return micros > 0 && micros >= thresholdMicros;
}

export function unmappedMessage(source: Pick<UsageSource, "name" | "currency" | "timeZone">, d: UnmappedDay): string {
  const money = (m: number) => formatMoney(m, source.currency);
  const named = d.items.filter((i) => i.micros > 0).slice(0, NAMED_ITEMS);
  const rest = d.items.filter((i) => i.micros > 0).length - named.length;
  const list = named.map((i) => `${i.item} (${money(i.micros)})`).join(", ") + (rest > 0 ? ` and ${rest} more` : "");
  return `${source.name} on ${d.day} (${source.timeZone} day): the provider billed ${money(d.micros)} on items no rule maps: ${list}. Nothing compares this money with Ceilings' charges: map each item to the endpoint that spends it.`;
}

/** Fires the unmapped alert of each day over the source's threshold; the days it fired for. */
export async function fireUnmappedAlerts(db: Db, source: UsageSource, days: readonly ProviderDay[]): Promise<ProviderDay[]> {
  const fired: ProviderDay[] = [];
  for (const d of await unmappedDays(db, source.id, days)) {
    if (!unmappedOver(d.micros, source.unmappedThresholdMicros)) continue;
    const ok = await fireAlert(db, {
      kind: "reconciliation_unmapped",
      dedupeKey: unmappedDedupeKey(
        source.id,
        d.day,
        d.items.filter((i) => i.micros > 0).map((i) => i.item),
      ),
      message: unmappedMessage(source, d),
      details: {
        sourceId: source.id,
        source: source.name,
        day: d.day,
        unmappedMicros: d.micros,
        thresholdMicros: source.unmappedThresholdMicros,
        currency: source.currency,
        items: d.items.slice(0, 20).map((i) => ({ item: i.item, micros: i.micros, units: i.units })),
      },
    });
    if (ok) fired.push(d.day);
  }
  return fired;
}

export type UnmappedSourceWeek = {
  sourceId: number;
  name: string;
  currency: string;
  thresholdMicros: number;
  /** Money on unmapped items over the source's last 7 complete days. */
  micros: number;
  /** Days of the 7 whose unmapped money reached the threshold (each alerted once). */
  daysOver: number;
  /** The costliest items, most money first. */
  items: UnmappedDayItem[];
};

/**
 * What the Reconciliation page leads with: every source that billed money on unmapped items in its
 * last 7 complete days, the most money first. One statement over the recent rows of all sources.
 */
export async function unmappedWeek(db: Db, now: Date): Promise<UnmappedSourceWeek[]> {
  const rows = resultRows<{ source_id: number; name: string; currency: string; threshold: string; day: string; item: string; micros: string; units: string }>(
    await db.execute(sql`
      select s.id as source_id, s.name, s.currency, s.unmapped_threshold_micros::text as threshold, u.day::text as day, u.item,
             coalesce(sum(u.cost_micros), 0)::text as micros, sum(u.units)::text as units
      from usage_sources s
      join usage_rows u on u.source_id = s.id
        and u.day >= (${now.toISOString()}::timestamptz at time zone s.time_zone)::date - 7
        and u.day < (${now.toISOString()}::timestamptz at time zone s.time_zone)::date
        and u.endpoint_id is null and u.budget_id is null and not u.rollup
      group by s.id, u.day, u.item`),
  );
  const bySource = new Map<number, UnmappedSourceWeek & { days: Map<string, number>; itemMap: Map<string, UnmappedDayItem> }>();
  for (const r of rows) {
    const s = bySource.get(r.source_id) ?? {
      sourceId: r.source_id,
      name: r.name,
      currency: r.currency,
      thresholdMicros: Number(r.threshold),
      micros: 0,
      daysOver: 0,
      items: [],
      days: new Map(),
      itemMap: new Map(),
    };
    const micros = Number(r.micros);
    s.micros += Math.max(micros, 0);
    s.days.set(r.day, (s.days.get(r.day) ?? 0) + Math.max(micros, 0));
    const item = s.itemMap.get(r.item) ?? { item: r.item, micros: 0, units: 0 };
    item.micros += micros;
    item.units += Number(r.units);
    s.itemMap.set(r.item, item);
    bySource.set(r.source_id, s);
  }
  return [...bySource.values()]
    .filter((s) => s.micros > 0)
    .map(({ days, itemMap, ...s }) => ({
      ...s,
      daysOver: [...days.values()].filter((m) => unmappedOver(m, s.thresholdMicros)).length,
      items: [...itemMap.values()]
        .filter((i) => i.micros > 0)
        .sort((a, b) => b.micros - a.micros || a.item.localeCompare(b.item))
        .slice(0, NAMED_ITEMS),
    }))
    .sort((a, b) => b.micros - a.micros || a.name.localeCompare(b.name));
}
