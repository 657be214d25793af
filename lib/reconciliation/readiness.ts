import { and, asc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { ceilings, endpoints, providerCaps, usageSourceRules } from "@/db/schema";
import { worstCases } from "@/lib/catalog/worst-case";
import {
  failClosedAnswer,
  reservedAnswer,
  secondCapAnswer,
  settledAnswer,
  toldAnswer,
  worstColor,
  type ReservedFacts,
  type ToldFacts,
} from "./readiness-answers";
import { LEDGER_DAYS_EVERY_MS, ledgerWeek, type LedgerWeek } from "./ledger-days";
import { notFinalSql } from "./final";
import { secondCapVerdict } from "./second-cap";
import type { ProviderCap, Readiness } from "./types";

// The readiness card of every endpoint at once: eight statements whatever the number of endpoints
// (the overview shows them all), run together, then the five answers per endpoint from memory.
// Settle discipline reads the worker's per-day rollup (ledger-days.ts), never the reservations.

const WEEK_MS = 7 * 86_400_000;

type EndpointFacts = { id: number; key: string; unit: string; currency: string; perCallMax: number; parts: { name: string; pricePico: number }[] };

export async function readinessOf(db: Db, p: { endpointIds?: number[]; now: Date }): Promise<Map<number, Readiness>> {
  const list: EndpointFacts[] = await db
    .select({
      id: endpoints.id,
      key: endpoints.key,
      unit: endpoints.unit,
      currency: endpoints.currency,
      perCallMax: endpoints.perCallMax,
      parts: endpoints.parts,
    })
    .from(endpoints)
    .where(p.endpointIds ? inArray(endpoints.id, p.endpointIds.length > 0 ? p.endpointIds : [-1]) : isNull(endpoints.archivedAt))
    .orderBy(asc(endpoints.id));
  const result = new Map<number, Readiness>();
  if (list.length === 0) return result;
  const ids = list.map((e) => e.id);
  const keys = list.map((e) => e.key);
  const since = new Date(p.now.getTime() - WEEK_MS);

  const [ceilingRows, caps, mapped, reconciled, settled, unavailable, told, unmapped] = await Promise.all([
    db
      .select({
        endpointId: ceilings.endpointId,
        metric: ceilings.metric,
        scope: ceilings.scope,
        window: ceilings.window,
        value: ceilings.value,
        valueBeforeKill: ceilings.valueBeforeKill,
      })
      .from(ceilings)
      .where(and(inArray(ceilings.endpointId, ids), eq(ceilings.scope, "global"))),
    db.select().from(providerCaps).where(inArray(providerCaps.endpointId, ids)),
    db
      .selectDistinct({ endpointId: usageSourceRules.endpointId })
      .from(usageSourceRules)
      .where(and(isNotNull(usageSourceRules.endpointId), inArray(usageSourceRules.endpointId, ids))),
    reconciledWeek(db, ids, p.now),
    ledgerWeek(db, ids, p.now),
    unavailableWeek(db, keys, since, p.now),
    toldFacts(db),
    unmappedWeek(db, ids, p.now),
  ]);

  const mappedIds = new Set(mapped.map((m) => m.endpointId));
  const capOf = new Map<number, ProviderCap>(caps.map((c) => [c.endpointId, c]));
  for (const e of list) {
    // A killed ceiling is judged at the value a restore puts back: the second cap must hold then too.
    const shapes = ceilingRows.filter((c) => c.endpointId === e.id).map((c) => ({ ...c, value: c.valueBeforeKill ?? c.value }));
    const verdict = secondCapVerdict(capOf.get(e.id) ?? null, worstCases(shapes, e), e);
    const week = reconciled.get(e.id);
    const reservedFacts: ReservedFacts = {
      mapped: mappedIds.has(e.id),
      days: week?.days ?? 0,
      billed: week?.billed ?? { units: 0, micros: 0 },
      charged: week?.charged ?? { units: 0, micros: 0 },
      threshold: week?.threshold ?? null,
      currency: week?.currency ?? e.currency,
      unmapped: unmapped.get(e.id) ?? null,
    };
    const answers = {
      reserved: reservedAnswer(reservedFacts),
      settled: settledOf(settled.get(e.id), p.now),
      failClosed: failClosedAnswer(unavailable.get(e.key) ?? 0),
      secondCap: secondCapAnswer(verdict),
      told: toldAnswer(told),
    };
    result.set(e.id, { ...answers, overall: worstColor(Object.values(answers).map((a) => a.color)) });
  }
  return result;
}

/** A count older than one run of the rollup (and a minute's slack) says when it was taken. */
function settledOf(week: LedgerWeek | undefined, now: Date) {
  if (!week) return settledAnswer({ settled: 0, released: 0, expired: 0, held: 0 });
  const stale = now.getTime() - week.computedAt.getTime() > LEDGER_DAYS_EVERY_MS + 60_000;
  return settledAnswer(week, stale ? `${week.computedAt.toISOString().slice(11, 16)} UTC` : null);
}

type Week = Omit<ReservedFacts, "mapped"> & { lastDay: string };

/** Each endpoint's compared days among the last 7 complete days of its source's zone, summed. */
async function reconciledWeek(db: Db, ids: number[], now: Date): Promise<Map<number, Week>> {
  const rows = resultRows<{
    endpoint_id: number;
    days: number;
    last_day: string;
    billed_units: string;
    billed_micros: string;
    charged_units: string;
    charged_micros: string;
    threshold_basis_points: number;
    threshold_micros: string;
    currency: string;
  }>(
    await db.execute(sql`
      select d.endpoint_id, count(*)::int as days, max(d.day)::text as last_day,
             sum(d.billed_units)::text as billed_units, sum(d.billed_micros)::text as billed_micros,
             sum(d.charged_units)::text as charged_units, sum(d.charged_micros)::text as charged_micros,
             s.threshold_basis_points, s.threshold_micros::text as threshold_micros, s.currency
      from reconciliation_days d
      join usage_sources s on s.id = d.source_id
      where d.endpoint_id in ${ids}
        and d.day >= (${now.toISOString()}::timestamptz at time zone s.time_zone)::date - 7
        and d.day < (${now.toISOString()}::timestamptz at time zone s.time_zone)::date
        -- Only final days: none still holding reservations, none a provider may still report.
        and not ${notFinalSql}
      group by d.endpoint_id, s.id`),
  );
  const out = new Map<number, Week>();
  for (const r of rows) {
    const prev = out.get(r.endpoint_id);
    const add = (a: number, b: string) => a + Number(b);
    const base = prev ?? { days: 0, lastDay: "", billed: { units: 0, micros: 0 }, charged: { units: 0, micros: 0 }, threshold: null, currency: r.currency };
    // A target is mapped by one source at a time; after a move, the newest source's threshold rules.
    const newest = r.last_day > base.lastDay;
    out.set(r.endpoint_id, {
      days: base.days + r.days,
      lastDay: newest ? r.last_day : base.lastDay,
      billed: { units: add(base.billed.units, r.billed_units), micros: add(base.billed.micros, r.billed_micros) },
      charged: { units: add(base.charged.units, r.charged_units), micros: add(base.charged.micros, r.charged_micros) },
      threshold: newest ? { basisPoints: r.threshold_basis_points, micros: Number(r.threshold_micros) } : base.threshold,
      currency: newest ? r.currency : base.currency,
    });
  }
  return out;
}

/**
 * Money on unmapped items of the last 7 complete days of each endpoint's mapping source, when at
 * least that source's unmapped threshold (roll-ups are their leaves, and never counted; credits
 * are not netted, as unmapped.ts says).
 */
async function unmappedWeek(db: Db, ids: number[], now: Date): Promise<Map<number, { source: string; micros: number }>> {
  const rows = resultRows<{ endpoint_id: number; name: string; micros: string }>(
    await db.execute(sql`
      select m.endpoint_id, s.name, sum(greatest(u.cost_micros, 0))::text as micros
      from (select distinct endpoint_id, source_id from usage_source_rules where endpoint_id in ${ids}) m
      join usage_sources s on s.id = m.source_id
      join usage_rows u on u.source_id = m.source_id
        and u.day >= (${now.toISOString()}::timestamptz at time zone s.time_zone)::date - 7
        and u.day < (${now.toISOString()}::timestamptz at time zone s.time_zone)::date
        and u.endpoint_id is null and u.budget_id is null and not u.rollup
      group by m.endpoint_id, s.id
      having sum(greatest(u.cost_micros, 0)) > 0 and sum(greatest(u.cost_micros, 0)) >= s.unmapped_threshold_micros
      order by m.endpoint_id, s.id`),
  );
  const out = new Map<number, { source: string; micros: number }>();
  for (const r of rows) {
    const prev = out.get(r.endpoint_id);
    out.set(r.endpoint_id, { source: prev ? `${prev.source} and ${r.name}` : r.name, micros: (prev?.micros ?? 0) + Number(r.micros) });
  }
  return out;
}

/**
 * Unavailable refusals of the last 7 days from the hourly rollup, by endpoint key: a refusal logged
 * while the database could not answer has no endpoint id, only the key the caller sent.
 */
async function unavailableWeek(db: Db, keys: string[], since: Date, now: Date): Promise<Map<string, number>> {
  const rows = resultRows<{ endpoint_key: string; n: string }>(
    await db.execute(sql`
      select endpoint_key, sum(count)::text as n
      from refusal_hourly
      where gate = 'unavailable' and endpoint_key in ${keys}
        and hour >= date_trunc('hour', ${since.toISOString()}::timestamptz) and hour <= ${now.toISOString()}::timestamptz
      group by endpoint_key`),
  );
  return new Map(rows.map((r) => [r.endpoint_key, Number(r.n)]));
}

/** Enabled destinations, and how the latest finished delivery to one of them ended (the same for every endpoint). */
async function toldFacts(db: Db): Promise<ToldFacts> {
  const [row] = resultRows<{ enabled: number; latest: "delivered" | "failed" | null }>(
    await db.execute(sql`
      select (select count(*)::int from alert_destinations where enabled) as enabled,
             (select d.state::text from alert_deliveries d join alert_destinations ad on ad.id = d.destination_id
              where ad.enabled and d.state in ('delivered', 'failed')
              order by d.alert_id desc, (d.state = 'failed') desc limit 1) as latest`),
  );
  return { enabledDestinations: row?.enabled ?? 0, latest: row?.latest ?? null };
}
