import { and, eq, gt, gte, inArray, isNotNull, not, or, sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { budgetMembers, budgets, endpoints, reconciliationDays, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { fireReconciliationAlert, type DriftTarget } from "./alert";
import { billedOf, type Billed } from "./billed";
import { chargedBetween, type Charged } from "./charged";
import { addDays, completeDays, dayBounds, dayIn, isProviderDay } from "./days";
import { LATE_PROVIDER_MS, lateSql, providerMayBeLate } from "./final";
import { driftOf } from "./drift";
import { fireUnmappedAlerts } from "./unmapped";
import type { ProviderDay, ReconciliationDay, UsageSource } from "./types";

// The comparison of a source's pulled days: for every endpoint and budget the source mapped on a
// day (by the rows it wrote then, or by a rule that existed when the day was pulled), billed beside
// charged over the provider's own day, written to reconciliation_days (replacing that day's earlier
// comparison) and alerted when over the source's threshold; money on items no rule maps is alerted
// per day too (unmapped.ts). Only days already over are compared
// (a file's today or a future day is stored, not compared). A day still holding reservations, or
// one the provider may still report more of (providerMayBeLate: judged by when the day was
// pulled), is not final: it is written, not alerted; recompareRecent compares it again once its
// reservations resolve, and asks for a fresh pull of a day pulled too early once it may be final.
// The source row is locked for the read and the write, as writeUsageDays does, so a comparison
// never overwrites a newer pull's with numbers read before it.

type NewDay = typeof reconciliationDays.$inferInsert;

export type Compared = {
  rows: ReconciliationDay[];
  /** Days asked for that are not over yet in the source's zone: stored, not compared. */
  notOver: ProviderDay[];
};

export async function compareSourceDays(db: Db, p: { sourceId: number; days: ProviderDay[]; now: Date }): Promise<ReconciliationDay[]> {
  return (await compareSourceDaysDetailed(db, p)).rows;
}

export async function compareSourceDaysDetailed(db: Db, p: { sourceId: number; days: ProviderDay[]; now: Date }): Promise<Compared> {
  const asked = [...new Set(p.days.filter(isProviderDay))].sort();
  if (asked.length === 0) return { rows: [], notOver: [] };
  const done = await db.transaction(async (tx) => {
    const [source] = await tx.select().from(usageSources).where(eq(usageSources.id, p.sourceId)).for("update");
    if (!source) return null;
    // Today (or a later day, in a file) is not over: its rows are stored, and compared once it is.
    const notOver = asked.filter((d) => dayBounds(d, source.timeZone).end.getTime() > p.now.getTime());
    const over = asked.filter((d) => !notOver.includes(d));
    if (over.length === 0) return { source, written: [], late: new Set<ProviderDay>(), unitsOnly: new Set<string>(), notOver, over };
    return { ...(await compareLocked(tx, source, over, p.now)), source, notOver, over };
  });
  if (!done) return { rows: [], notOver: [] };
  const { source, written, late, unitsOnly, notOver, over } = done;
  // Money no rule maps is billed whether or not the day is final: it only grows as the provider
  // reports more, so it is alerted as soon as it passes the threshold.
  await fireUnmappedAlerts(db, source, over);
  const threshold = { basisPoints: source.thresholdBasisPoints, micros: source.thresholdMicros };
  for (const { target, row } of written) {
    if (row.heldReservations > 0 || late.has(row.day)) continue;
    const drift = driftOf({ units: row.billedUnits, micros: row.billedMicros }, { units: row.chargedUnits, micros: row.chargedMicros }, threshold, {
      unitsOnly: unitsOnly.has(`${target.kind}:${target.id}:${row.day}`),
    });
    if (drift.over) await fireReconciliationAlert(db, { target, row, drift, currency: source.currency, zone: source.timeZone });
  }
  return { rows: written.map((w) => w.row), notOver };
}

async function compareLocked(tx: Db, source: UsageSource, asked: ProviderDay[], now: Date) {
  // Only days the provider reported (a pull wrote them, with or without rows) have a billed side.
  const pulled = await tx
    .select({ day: usagePulls.day, pulledAt: usagePulls.pulledAt, rows: usagePulls.rows })
    .from(usagePulls)
    .where(and(eq(usagePulls.sourceId, source.id), inArray(usagePulls.day, asked)));
  const pullOf = new Map(pulled.map((r) => [r.day, r]));
  const days = asked.filter((d) => pullOf.has(d));
  if (days.length === 0) return { written: [], late: new Set<ProviderDay>(), unitsOnly: new Set<string>() };

  const [rules, rows, costed] = await Promise.all([
    tx
      .select({ endpointId: usageSourceRules.endpointId, budgetId: usageSourceRules.budgetId, createdAt: usageSourceRules.createdAt })
      .from(usageSourceRules)
      .where(eq(usageSourceRules.sourceId, source.id)),
    tx
      .select({
        day: usageRows.day,
        endpointId: usageRows.endpointId,
        budgetId: usageRows.budgetId,
        part: usageRows.part,
        units: usageRows.units,
        costMicros: usageRows.costMicros,
      })
      .from(usageRows)
      .where(and(eq(usageRows.sourceId, source.id), inArray(usageRows.day, days), or(isNotNull(usageRows.endpointId), isNotNull(usageRows.budgetId)))),
    // Days with any cost row, mapped or not: OpenAI's and Anthropic's costs come apart from usage.
    tx
      .selectDistinct({ day: usageRows.day })
      .from(usageRows)
      .where(and(eq(usageRows.sourceId, source.id), inArray(usageRows.day, days), isNotNull(usageRows.costMicros))),
  ]);
  const hasCost = new Set(costed.map((r) => r.day));
  // A day's rows keep the mapping they were pulled with: a target is compared on a day when rows of
  // that day are mapped to it, or when a rule mapping it already existed when the day was pulled
  // (it then billed nothing). A rule added since applies from the day's next pull: until then the
  // day says nothing about its target, and calling it "billed nothing" would be a false alert.
  const targetsOf = (day: ProviderDay, column: "endpointId" | "budgetId") => {
    const pulledAt = pullOf.get(day)?.pulledAt ?? new Date(0);
    return ids([...rows.filter((r) => r.day === day).map((r) => r[column]), ...rules.filter((r) => r.createdAt <= pulledAt).map((r) => r[column])]);
  };
  const endpointIds = ids([...rules.map((r) => r.endpointId), ...rows.map((r) => r.endpointId)]);
  const budgetIds = ids([...rules.map((r) => r.budgetId), ...rows.map((r) => r.budgetId)]);
  const members = budgetIds.length === 0 ? [] : await tx.select().from(budgetMembers).where(inArray(budgetMembers.budgetId, budgetIds));
  const allEndpointIds = ids([...endpointIds, ...members.map((m) => m.endpointId)]);
  const [endpointRows, budgetRows] = await Promise.all([
    allEndpointIds.length === 0
      ? []
      : tx
          .select({ id: endpoints.id, key: endpoints.key, unit: endpoints.unit, parts: endpoints.parts })
          .from(endpoints)
          .where(inArray(endpoints.id, allEndpointIds)),
    budgetIds.length === 0 ? [] : tx.select({ id: budgets.id, key: budgets.key }).from(budgets).where(inArray(budgets.id, budgetIds)),
  ]);

  const values: { target: DriftTarget; row: NewDay }[] = [];
  const late = new Set<ProviderDay>();
  const unitsOnly = new Set<string>();
  for (const day of days) {
    const { start, end } = dayBounds(day, source.timeZone);
    const pull = pullOf.get(day);
    if (pull && providerMayBeLate({ kind: source.kind, rows: pull.rows, hasCost: hasCost.has(day), pulledAt: pull.pulledAt, dayEnd: end })) late.add(day);
    const charged = await chargedBetween(tx, allEndpointIds, start, end);
    const base = { sourceId: source.id, day, dayStart: start, dayEnd: end, computedAt: now };
    const ofDay = rows.filter((r) => r.day === day);
    const dayEndpoints = targetsOf(day, "endpointId");
    const dayBudgets = targetsOf(day, "budgetId");
    for (const e of endpointRows.filter((x) => dayEndpoints.includes(x.id))) {
      const billed = billedOf(
        ofDay.filter((r) => r.endpointId === e.id),
        e.parts,
      );
      const c = charged.get(e.id) ?? ZERO;
      values.push({ target: { kind: "endpoint", id: e.id, key: e.key, unit: e.unit }, row: { ...base, endpointId: e.id, ...sides(billed, c) } });
    }
    for (const b of budgetRows.filter((x) => dayBudgets.includes(x.id))) {
      // The budget is charged the sum of its members, so it is billed what this source billed it
      // and each of its members (a member the source maps by a rule of its own, its model, say).
      const memberIds = members.filter((m) => m.budgetId === b.id).map((m) => m.endpointId);
      const own = ofDay.filter((r) => r.budgetId === b.id);
      const billed = sumBilled([
        billedOf(own, null),
        ...endpointRows
          .filter((e) => memberIds.includes(e.id))
          .map((e) =>
            billedOf(
              ofDay.filter((r) => r.endpointId === e.id),
              e.parts,
            ),
          ),
      ]);
      // Its own rows carry no money (counts alone): a budget has no price for them, so the day is
      // compared in units only (unitsOnlySql says the same to the readers).
      if (own.length > 0 && own.every((r) => r.costMicros === null)) unitsOnly.add(`budget:${b.id}:${day}`);
      const c = sum(memberIds.map((id) => charged.get(id) ?? ZERO));
      values.push({ target: { kind: "budget", id: b.id, key: b.key, unit: "units" }, row: { ...base, budgetId: b.id, ...sides(billed, c) } });
    }
  }
  return { written: await writeDays(tx, source.id, days, values), late, unitsOnly };
}

const ZERO: Charged = { units: 0, micros: 0, held: 0 };

function ids(list: readonly (number | null)[]): number[] {
  return [...new Set(list.filter((x): x is number => x !== null))].sort((a, b) => a - b);
}

function sum(list: readonly Charged[]): Charged {
  return list.reduce((a, c) => ({ units: a.units + c.units, micros: a.micros + c.micros, held: a.held + c.held }), ZERO);
}

function sumBilled(list: readonly Billed[]): Billed {
  // Money is 'reported' only when the provider's own money is all of it: a part priced by
  // Ceilings (count-only rows of a member) makes the whole 'priced'.
  const withRows = list.filter((b) => b.units > 0 || b.micros > 0);
  const money = withRows.some((b) => b.money === "reported") && withRows.every((b) => b.money === "reported") ? "reported" : "priced";
  return { units: list.reduce((n, b) => n + b.units, 0), micros: list.reduce((n, b) => n + b.micros, 0), money };
}

function sides(billed: Billed, charged: Charged) {
  return {
    billedUnits: billed.units,
    billedMicros: billed.micros,
    billedMoney: billed.money,
    chargedUnits: charged.units,
    chargedMicros: charged.micros,
    heldReservations: charged.held,
  };
}

/**
 * Replaces the source's comparisons of these days (inside compareSourceDays' transaction): targets it no longer maps
 * lose that day's row, the rest are upserted in (target, day) order, so two workers comparing the
 * same days take the rows' locks in the same order.
 */
async function writeDays(db: Db, sourceId: number, days: ProviderDay[], values: { target: DriftTarget; row: NewDay }[]) {
  const key = (v: { target: DriftTarget; row: NewDay }) => `${v.target.kind}:${String(v.target.id).padStart(10, "0")}:${v.row.day}`;
  const sorted = [...values].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const byKind = (kind: DriftTarget["kind"]) => sorted.filter((v) => v.target.kind === kind);
  // What each day keeps, by kind: the targets compared on that day (they differ by day, with the
  // rules that existed when each day was pulled).
  const keptOn = (kind: DriftTarget["kind"], day: ProviderDay) =>
    ids(
      byKind(kind)
        .filter((v) => v.row.day === day)
        .map((v) => v.target.id),
    );
  const update = {
    sourceId: sql`excluded.source_id`,
    dayStart: sql`excluded.day_start`,
    dayEnd: sql`excluded.day_end`,
    billedUnits: sql`excluded.billed_units`,
    billedMicros: sql`excluded.billed_micros`,
    billedMoney: sql`excluded.billed_money`,
    chargedUnits: sql`excluded.charged_units`,
    chargedMicros: sql`excluded.charged_micros`,
    heldReservations: sql`excluded.held_reservations`,
    computedAt: sql`excluded.computed_at`,
  };
  {
    const tx = db;
    const stale = (kind: DriftTarget["kind"], column: typeof reconciliationDays.endpointId | typeof reconciliationDays.budgetId) => {
      const keptDays = days.map((day) => ({ day, keep: keptOn(kind, day) })).filter((d) => d.keep.length > 0);
      const kept = or(...keptDays.map((d) => and(eq(reconciliationDays.day, d.day), inArray(column, d.keep))));
      return tx
        .delete(reconciliationDays)
        .where(and(eq(reconciliationDays.sourceId, sourceId), inArray(reconciliationDays.day, days), isNotNull(column), ...(kept ? [not(kept)] : [])));
    };
    await stale("endpoint", reconciliationDays.endpointId);
    await stale("budget", reconciliationDays.budgetId);
    const out: { target: DriftTarget; row: ReconciliationDay }[] = [];
    const endpointValues = byKind("endpoint");
    if (endpointValues.length > 0) {
      const rows = await tx
        .insert(reconciliationDays)
        .values(endpointValues.map((v) => v.row))
        .onConflictDoUpdate({ target: [reconciliationDays.endpointId, reconciliationDays.day], targetWhere: sql`endpoint_id is not null`, set: update })
        .returning();
      for (const row of rows) out.push({ target: targetOf(endpointValues, "endpoint", row.endpointId), row });
    }
    const budgetValues = byKind("budget");
    if (budgetValues.length > 0) {
      const rows = await tx
        .insert(reconciliationDays)
        .values(budgetValues.map((v) => v.row))
        .onConflictDoUpdate({ target: [reconciliationDays.budgetId, reconciliationDays.day], targetWhere: sql`budget_id is not null`, set: update })
        .returning();
      for (const row of rows) out.push({ target: targetOf(budgetValues, "budget", row.budgetId), row });
    }
    return out;
  }
}

function targetOf(values: { target: DriftTarget }[], kind: DriftTarget["kind"], id: number | null): DriftTarget {
  const found = values.find((v) => v.target.kind === kind && v.target.id === id);
  if (!found) throw new Error(`reconciliation: upserted a ${kind} row #${String(id)} that was not asked for`);
  return found.target;
}

const nowParam = (now: Date) => sql`${now.toISOString()}::timestamptz`;

/**
 * Compares again the days of each enabled source's lookback that were written while reservations
 * were still held: such a day becomes final once they resolve, and only then may it alert. A day
 * pulled too early to be final (providerMayBeLate) is not compared again from that same early
 * pull: once it may be final (LATE_PROVIDER_MS past its end) and the source has not been pulled
 * since, a fresh pull is requested (pull_requested_at), and that pull's comparison decides. One
 * read of the last 37 days (the day index) when there are none.
 */
export async function recompareRecent(db: Db, now: Date): Promise<{ sources: number; days: number; pullsRequested: number }> {
  // 36 days covers the longest lookback (35) in any zone.
  const since = addDays(dayIn(now, "UTC"), -37);
  const open = await db
    .selectDistinct({
      sourceId: reconciliationDays.sourceId,
      day: reconciliationDays.day,
      timeZone: usageSources.timeZone,
      lookbackDays: usageSources.lookbackDays,
    })
    .from(reconciliationDays)
    .innerJoin(usageSources, eq(usageSources.id, reconciliationDays.sourceId))
    .where(and(gte(reconciliationDays.day, since), eq(usageSources.enabled, true), gt(reconciliationDays.heldReservations, 0)));
  const bySource = new Map<number, Pick<UsageSource, "timeZone" | "lookbackDays"> & { days: string[] }>();
  for (const r of open) {
    const entry = bySource.get(r.sourceId) ?? { timeZone: r.timeZone, lookbackDays: r.lookbackDays, days: [] };
    entry.days.push(r.day);
    bySource.set(r.sourceId, entry);
  }
  let days = 0;
  for (const [sourceId, s] of bySource) {
    const recent = new Set(completeDays(now, s.timeZone, s.lookbackDays));
    const due = s.days.filter((d) => recent.has(d));
    if (due.length === 0) continue;
    await compareSourceDays(db, { sourceId, days: due, now });
    days += due.length;
  }
  const pullsRequested = await requestPullsOfLateDays(db, now, since);
  return { sources: bySource.size, days, pullsRequested };
}

/**
 * Asks for a fresh pull of every enabled API source holding a day of its lookback that was pulled
 * too early to be final and may be final now, when the source has not been pulled since it could
 * be (a pull that fails is not asked again here: the schedule retries it).
 */
async function requestPullsOfLateDays(db: Db, now: Date, since: ProviderDay): Promise<number> {
  const late = sql.raw(`interval '${LATE_PROVIDER_MS / 1000} seconds'`);
  const requested = await db.execute(sql`
    update usage_sources set pull_requested_at = ${nowParam(now)}
    where pull_requested_at is null and id in (
      select s.id from reconciliation_days d join usage_sources s on s.id = d.source_id
      where d.day >= ${since}::date and s.enabled and s.kind <> 'file'
        and d.day >= (${nowParam(now)} at time zone s.time_zone)::date - s.lookback_days
        and d.day_end + ${late} <= ${nowParam(now)}
        and (s.last_pull_at is null or s.last_pull_at < d.day_end + ${late})
        and ${lateSql})
    returning id`);
  return resultRows<{ id: number }>(requested).length;
}
