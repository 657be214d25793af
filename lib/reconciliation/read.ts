import { asc, count, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, endpoints, usageSourceRules, usageSources } from "@/db/schema";
import { Int, parseRows } from "@/lib/spend/source";
import { addDays, completeDays, dayIn } from "./days";
import { driftOf } from "./drift";
import { notFinalSql, unitsOnlySql } from "./final";
import type { Drift, ProviderDay, UsageSourceKind } from "./types";
import { usageSourceKinds } from "./types";

// What the dashboard shows of reconciliation: an endpoint's billed and charged lines day by day, and
// the grid of every target's last 7 provider days. Reads only the comparison rows compare.ts writes
// (never the reservations: at millions a week that scan cost seconds): a day no source has compared
// is a gap in both lines, not a day of zero. The ledger itself is on the endpoint's other charts.

export type ReconSourceSummary = { id: number; name: string; kind: UsageSourceKind; timeZone: string; lastPullOkAt: Date | null; lastPullError: string | null };

export type ReconDay = {
  day: ProviderDay;
  /** Null on a day no source has compared (not pulled yet, or before the source existed). */
  billedUnits: number | null;
  billedMicros: number | null;
  /** What the comparison charged that day; null with billed (the two lines have the same gaps). */
  chargedUnits: number | null;
  chargedMicros: number | null;
  drift: Drift | null;
  /** Reservations still held on that day when it was compared: its charged numbers may still move. */
  held: number;
  /**
   * False on a compared day that may still move (reservations held, or a provider that may still
   * report it: compare.ts does not alert it): shown as "not final", never as over. True otherwise.
   */
  final: boolean;
};

export type ReconSeries = { unit: string; currency: string; timeZone: string; days: ReconDay[] };

export type EndpointReconciliation = { source: ReconSourceSummary | null; ranges: { 30: ReconSeries; 90: ReconSeries } };

const Threshold = { threshold_basis_points: Int, threshold_micros: Int };
const RowDay = z.object({
  day: z.string(),
  billed_units: Int,
  billed_micros: Int,
  charged_units: Int,
  charged_micros: Int,
  held: Int,
  not_final: z.boolean(),
  units_only: z.boolean(),
  ...Threshold,
});

/** The day's drift as compare.ts judged it: in units alone for a budget whose rows carry no money. */
function driftOfRow(r: z.infer<typeof RowDay>): Drift {
  return driftOf(
    { units: r.billed_units, micros: r.billed_micros },
    { units: r.charged_units, micros: r.charged_micros },
    { basisPoints: r.threshold_basis_points, micros: r.threshold_micros },
    { unitsOnly: r.units_only },
  );
}

/** The columns every comparison read takes beside the numbers (d: reconciliation_days, s: usage_sources). */
const judged = sql`${notFinalSql} as not_final, ${unitsOnlySql} as units_only`;

/** The source that reports an endpoint: the one whose rule maps it, else the one that last compared it. */
async function sourceOfEndpoint(db: Db, endpointId: number): Promise<ReconSourceSummary | null> {
  const [s] = await db
    .select({
      id: usageSources.id,
      name: usageSources.name,
      kind: usageSources.kind,
      timeZone: usageSources.timeZone,
      lastPullOkAt: usageSources.lastPullOk,
      lastPullError: usageSources.lastPullError,
    })
    .from(usageSources)
    .where(
      sql`${usageSources.id} = coalesce(
        (select r.source_id from usage_source_rules r where r.endpoint_id = ${endpointId} order by r.id limit 1),
        (select d.source_id from reconciliation_days d where d.endpoint_id = ${endpointId} order by d.day desc limit 1))`,
    );
  return s ?? null;
}

/**
 * An endpoint's billed and charged numbers for each of the last 90 complete provider days (in its
 * source's time zone, UTC when none reports it), and the last 30 of them, from the comparison rows
 * alone: three statements, none of them on the reservations.
 */
export async function endpointReconciliation(db: Db, p: { endpointId: number; now: Date }): Promise<EndpointReconciliation> {
  const [[endpoint], source] = await Promise.all([
    db.select({ unit: endpoints.unit, currency: endpoints.currency }).from(endpoints).where(eq(endpoints.id, p.endpointId)),
    sourceOfEndpoint(db, p.endpointId),
  ]);
  if (!endpoint) throw new Error(`no endpoint with id ${p.endpointId}`);
  const zone = source?.timeZone ?? "UTC";
  const axis = completeDays(p.now, zone, 90);
  const first = axis[0] ?? dayIn(p.now, zone);
  const last = axis[axis.length - 1] ?? first;
  const compared = await db.execute(sql`
    select d.day::text as day, d.billed_units, d.billed_micros, d.charged_units, d.charged_micros, d.held_reservations as held,
      s.threshold_basis_points, s.threshold_micros, ${judged}
    from reconciliation_days d join usage_sources s on s.id = d.source_id
    where d.endpoint_id = ${p.endpointId} and d.day >= ${first}::date and d.day <= ${last}::date`);
  const rows = new Map(parseRows("endpointReconciliation days", RowDay, compared).map((r) => [r.day, r]));
  const days: ReconDay[] = axis.map((day) => {
    const row = rows.get(day);
    // The compared row's charged numbers are the ones its drift (and any alert) was judged on.
    if (row)
      return {
        day,
        billedUnits: row.billed_units,
        billedMicros: row.billed_micros,
        chargedUnits: row.charged_units,
        chargedMicros: row.charged_micros,
        drift: driftOfRow(row),
        held: row.held,
        final: !row.not_final,
      };
    return { day, billedUnits: null, billedMicros: null, chargedUnits: null, chargedMicros: null, drift: null, held: 0, final: true };
  });
  const series = (n: number): ReconSeries => ({ unit: endpoint.unit, currency: endpoint.currency, timeZone: zone, days: days.slice(-n) });
  return { source, ranges: { 30: series(30), 90: series(90) } };
}

export type GridDay = {
  day: ProviderDay;
  /** Null when no comparison row exists for the day (not pulled, or nothing mapped yet). */
  billed: { units: number; micros: number } | null;
  charged: { units: number; micros: number } | null;
  held: number;
  drift: Drift | null;
  /** False on a compared day that may still move (see ReconDay.final): "not final", never "over". */
  final: boolean;
  /** A budget's day whose rows carry no money: compared in units alone. */
  unitsOnly: boolean;
};

export type ReconGridRow = {
  target: "endpoint" | "budget";
  id: number;
  key: string;
  name: string;
  /** The endpoint's unit; null for a budget (money only). */
  unit: string | null;
  currency: string;
  /** Null: no source maps it ("not reconciled"), and `days` is empty. */
  source: { id: number; name: string; kind: UsageSourceKind; timeZone: string } | null;
  days: GridDay[];
  overDays: number;
};

const GridSource = z.object({
  endpoint_id: z.number().nullable(),
  budget_id: z.number().nullable(),
  source_id: Int,
  name: z.string(),
  kind: z.enum(usageSourceKinds),
  time_zone: z.string(),
});
const GridRowDay = RowDay.extend({
  endpoint_id: z.number().nullable(),
  budget_id: z.number().nullable(),
  source_id: Int,
  name: z.string(),
  kind: GridSource.shape.kind,
  time_zone: z.string(),
});

const targetKey = (endpointId: number | null, budgetId: number | null) => (endpointId !== null ? `e${endpointId}` : `b${budgetId ?? 0}`);

/**
 * Every endpoint and budget a source maps (or compared in the last days), with its last 7 complete
 * provider days in that source's zone; then every live endpoint nothing maps, as not reconciled.
 * Five statements whatever the number of targets.
 */
export async function reconciliationGrid(db: Db, p: { now: Date }): Promise<ReconGridRow[]> {
  // No zone is more than a day from UTC: 9 UTC days back cover the 7 complete days of any zone.
  const utcToday = dayIn(p.now, "UTC");
  const [mapped, compared, allEndpoints] = await Promise.all([
    db.execute(sql`
      select distinct on (coalesce(r.endpoint_id, -r.budget_id)) r.endpoint_id, r.budget_id, s.id as source_id, s.name, s.kind::text as kind, s.time_zone
      from usage_source_rules r join usage_sources s on s.id = r.source_id
      order by coalesce(r.endpoint_id, -r.budget_id), r.id`),
    db.execute(sql`
      select d.endpoint_id, d.budget_id, d.day::text as day, d.billed_units, d.billed_micros, d.charged_units, d.charged_micros, d.held_reservations as held,
        s.id as source_id, s.name, s.kind::text as kind, s.time_zone, s.threshold_basis_points, s.threshold_micros, ${judged}
      from reconciliation_days d join usage_sources s on s.id = d.source_id
      where d.day >= ${addDays(utcToday, -9)}::date and d.day <= ${addDays(utcToday, 1)}::date`),
    db
      .select({
        id: endpoints.id,
        key: endpoints.key,
        name: endpoints.name,
        unit: endpoints.unit,
        currency: endpoints.currency,
        archivedAt: endpoints.archivedAt,
      })
      .from(endpoints)
      .orderBy(asc(endpoints.key)),
  ]);
  const sources = new Map<string, z.infer<typeof GridSource>>();
  for (const s of parseRows("reconciliationGrid rules", GridSource, mapped)) sources.set(targetKey(s.endpoint_id, s.budget_id), s);
  const byTarget = new Map<string, Map<string, z.infer<typeof GridRowDay>>>();
  for (const r of parseRows("reconciliationGrid days", GridRowDay, compared)) {
    const k = targetKey(r.endpoint_id, r.budget_id);
    // A target whose rule is gone still shows the days its old source compared.
    if (!sources.has(k)) sources.set(k, r);
    const days = byTarget.get(k) ?? new Map();
    days.set(r.day, r);
    byTarget.set(k, days);
  }
  const budgetIds = [...sources.values()].flatMap((s) => (s.budget_id === null ? [] : [s.budget_id]));
  const budgetRows =
    budgetIds.length === 0
      ? []
      : await db
          .select({ id: budgets.id, key: budgets.key, name: budgets.name, currency: budgets.currency })
          .from(budgets)
          .where(inArray(budgets.id, budgetIds));

  const rowOf = (k: string, base: Omit<ReconGridRow, "source" | "days" | "overDays">): ReconGridRow => {
    const s = sources.get(k);
    if (!s) return { ...base, source: null, days: [], overDays: 0 };
    const compared = byTarget.get(k);
    const days = completeDays(p.now, s.time_zone, 7).map((day): GridDay => {
      const r = compared?.get(day);
      if (!r) return { day, billed: null, charged: null, held: 0, drift: null, final: true, unitsOnly: false };
      return {
        day,
        billed: { units: r.billed_units, micros: r.billed_micros },
        charged: { units: r.charged_units, micros: r.charged_micros },
        held: r.held,
        drift: driftOfRow(r),
        final: !r.not_final,
        unitsOnly: r.units_only,
      };
    });
    // A day not final is not counted over: compare.ts has not alerted it, and may never.
    return {
      ...base,
      source: { id: s.source_id, name: s.name, kind: s.kind, timeZone: s.time_zone },
      days,
      overDays: days.filter((d) => d.final && d.drift?.over).length,
    };
  };

  const reconciled: ReconGridRow[] = [];
  const notReconciled: ReconGridRow[] = [];
  for (const e of allEndpoints) {
    const k = targetKey(e.id, null);
    if (sources.has(k)) reconciled.push(rowOf(k, { target: "endpoint", id: e.id, key: e.key, name: e.name, unit: e.unit, currency: e.currency }));
    // An archived endpoint spends nothing: it needs no source.
    else if (e.archivedAt === null)
      notReconciled.push(rowOf(k, { target: "endpoint", id: e.id, key: e.key, name: e.name, unit: e.unit, currency: e.currency }));
  }
  for (const b of budgetRows)
    reconciled.push(rowOf(targetKey(null, b.id), { target: "budget", id: b.id, key: b.key, name: b.name, unit: null, currency: b.currency }));
  // Days over the threshold first, then by key: what needs a look leads.
  reconciled.sort((a, b) => b.overDays - a.overDays || a.key.localeCompare(b.key));
  return [...reconciled, ...notReconciled];
}

export type UsageSourceListItem = {
  id: number;
  name: string;
  kind: UsageSourceKind;
  enabled: boolean;
  timeZone: string;
  lastPullAt: Date | null;
  lastPullOkAt: Date | null;
  lastPullError: string | null;
  pullRequestedAt: Date | null;
  rules: number;
};

/** Every usage source with its last pull, for the Reconciliation page's list (two statements). */
export async function reconciliationSources(db: Db): Promise<UsageSourceListItem[]> {
  const [list, counts] = await Promise.all([
    db
      .select({
        id: usageSources.id,
        name: usageSources.name,
        kind: usageSources.kind,
        enabled: usageSources.enabled,
        timeZone: usageSources.timeZone,
        lastPullAt: usageSources.lastPullAt,
        lastPullOkAt: usageSources.lastPullOk,
        lastPullError: usageSources.lastPullError,
        pullRequestedAt: usageSources.pullRequestedAt,
      })
      .from(usageSources)
      .orderBy(asc(usageSources.name)),
    db.select({ sourceId: usageSourceRules.sourceId, n: count() }).from(usageSourceRules).groupBy(usageSourceRules.sourceId),
  ]);
  const rules = new Map(counts.map((c) => [c.sourceId, c.n]));
  return list.map((s) => ({ ...s, rules: rules.get(s.id) ?? 0 }));
}
