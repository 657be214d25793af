import { and, eq, gt, gte, inArray, isNotNull, notInArray, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, endpoints, reconciliationDays, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { fireReconciliationAlert, type DriftTarget } from "./alert";
import { billedOf } from "./billed";
import { chargedBetween, type Charged } from "./charged";
import { addDays, completeDays, dayBounds, dayIn, isProviderDay } from "./days";
import { driftOf } from "./drift";
import type { ProviderDay, ReconciliationDay, UsageSource } from "./types";

// The comparison of a source's pulled days: for every endpoint and budget the source maps (by its
// rules now, or by the rows it wrote then), billed beside charged over the provider's own day,
// written to reconciliation_days (replacing that day's earlier comparison) and alerted when over
// the source's threshold. A day still holding reservations is not final: it is written, not
// alerted, and recompareRecent revisits it once they resolve.

type NewDay = typeof reconciliationDays.$inferInsert;

export async function compareSourceDays(db: Db, p: { sourceId: number; days: ProviderDay[]; now: Date }): Promise<ReconciliationDay[]> {
  const [source] = await db.select().from(usageSources).where(eq(usageSources.id, p.sourceId));
  const asked = [...new Set(p.days.filter(isProviderDay))].sort();
  if (!source || asked.length === 0) return [];
  // Only days the provider reported (a pull wrote them, with or without rows) have a billed side.
  const pulled = await db.select({ day: usagePulls.day }).from(usagePulls).where(and(eq(usagePulls.sourceId, source.id), inArray(usagePulls.day, asked)));
  const days = asked.filter((d) => pulled.some((r) => r.day === d));
  if (days.length === 0) return [];

  const [rules, rows] = await Promise.all([
    db.select({ endpointId: usageSourceRules.endpointId, budgetId: usageSourceRules.budgetId }).from(usageSourceRules).where(eq(usageSourceRules.sourceId, source.id)),
    db
      .select({ day: usageRows.day, endpointId: usageRows.endpointId, budgetId: usageRows.budgetId, part: usageRows.part, units: usageRows.units, costMicros: usageRows.costMicros })
      .from(usageRows)
      .where(and(eq(usageRows.sourceId, source.id), inArray(usageRows.day, days), or(isNotNull(usageRows.endpointId), isNotNull(usageRows.budgetId)))),
  ]);
  const endpointIds = ids([...rules.map((r) => r.endpointId), ...rows.map((r) => r.endpointId)]);
  const budgetIds = ids([...rules.map((r) => r.budgetId), ...rows.map((r) => r.budgetId)]);
  const members = budgetIds.length === 0 ? [] : await db.select().from(budgetMembers).where(inArray(budgetMembers.budgetId, budgetIds));
  const allEndpointIds = ids([...endpointIds, ...members.map((m) => m.endpointId)]);
  const [endpointRows, budgetRows] = await Promise.all([
    allEndpointIds.length === 0 ? [] : db.select({ id: endpoints.id, key: endpoints.key, unit: endpoints.unit, parts: endpoints.parts }).from(endpoints).where(inArray(endpoints.id, allEndpointIds)),
    budgetIds.length === 0 ? [] : db.select({ id: budgets.id, key: budgets.key }).from(budgets).where(inArray(budgets.id, budgetIds)),
  ]);

  const values: { target: DriftTarget; row: NewDay }[] = [];
  for (const day of days) {
    const { start, end } = dayBounds(day, source.timeZone);
    const charged = await chargedBetween(db, allEndpointIds, start, end);
    const base = { sourceId: source.id, day, dayStart: start, dayEnd: end, computedAt: p.now };
    for (const e of endpointRows.filter((x) => endpointIds.includes(x.id))) {
      const billed = billedOf(rows.filter((r) => r.day === day && r.endpointId === e.id), e.parts);
      const c = charged.get(e.id) ?? ZERO;
      values.push({ target: { kind: "endpoint", id: e.id, key: e.key, unit: e.unit }, row: { ...base, endpointId: e.id, ...sides(billed, c) } });
    }
    for (const b of budgetRows) {
      const billed = billedOf(rows.filter((r) => r.day === day && r.budgetId === b.id), null);
      const c = sum(members.filter((m) => m.budgetId === b.id).map((m) => charged.get(m.endpointId) ?? ZERO));
      values.push({ target: { kind: "budget", id: b.id, key: b.key, unit: "units" }, row: { ...base, budgetId: b.id, ...sides(billed, c) } });
    }
  }

  const written = await writeDays(db, source.id, days, values);
  const threshold = { basisPoints: source.thresholdBasisPoints, micros: source.thresholdMicros };
  for (const { target, row } of written) {
    if (row.heldReservations > 0) continue;
    const drift = driftOf({ units: row.billedUnits, micros: row.billedMicros }, { units: row.chargedUnits, micros: row.chargedMicros }, threshold);
    if (drift.over) await fireReconciliationAlert(db, { target, row, drift, currency: source.currency, zone: source.timeZone });
  }
  return written.map((w) => w.row);
}

const ZERO: Charged = { units: 0, micros: 0, held: 0 };

function ids(list: readonly (number | null)[]): number[] {
  return [...new Set(list.filter((x): x is number => x !== null))].sort((a, b) => a - b);
}

function sum(list: readonly Charged[]): Charged {
  return list.reduce((a, c) => ({ units: a.units + c.units, micros: a.micros + c.micros, held: a.held + c.held }), ZERO);
}

function sides(billed: ReturnType<typeof billedOf>, charged: Charged) {
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
 * Replaces the source's comparisons of these days in one transaction: targets it no longer maps
 * lose that day's row, the rest are upserted in (target, day) order, so two workers comparing the
 * same days take the rows' locks in the same order.
 */
async function writeDays(db: Db, sourceId: number, days: ProviderDay[], values: { target: DriftTarget; row: NewDay }[]) {
  const key = (v: { target: DriftTarget; row: NewDay }) => `${v.target.kind}:${String(v.target.id).padStart(10, "0")}:${v.row.day}`;
  const sorted = [...values].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const byKind = (kind: DriftTarget["kind"]) => sorted.filter((v) => v.target.kind === kind);
  const kept = (kind: DriftTarget["kind"]) => ids(byKind(kind).map((v) => v.target.id));
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
  return db.transaction(async (tx) => {
    const stale = (column: typeof reconciliationDays.endpointId | typeof reconciliationDays.budgetId, keep: number[]) =>
      tx.delete(reconciliationDays).where(and(eq(reconciliationDays.sourceId, sourceId), inArray(reconciliationDays.day, days), isNotNull(column), ...(keep.length > 0 ? [notInArray(column, keep)] : [])));
    await stale(reconciliationDays.endpointId, kept("endpoint"));
    await stale(reconciliationDays.budgetId, kept("budget"));
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
  });
}

function targetOf(values: { target: DriftTarget }[], kind: DriftTarget["kind"], id: number | null): DriftTarget {
  const found = values.find((v) => v.target.kind === kind && v.target.id === id);
  if (!found) throw new Error(`reconciliation: upserted a ${kind} row #${String(id)} that was not asked for`);
  return found.target;
}

/**
 * Compares again the days of each enabled source's lookback that were written while reservations
 * were still held: such a day becomes final once they resolve, and only then may it alert. One
 * indexed read when there are none.
 */
export async function recompareRecent(db: Db, now: Date): Promise<{ sources: number; days: number }> {
  // 36 days covers the longest lookback (35) in any zone.
  const since = addDays(dayIn(now, "UTC"), -37);
  const open = await db
    .selectDistinct({ sourceId: reconciliationDays.sourceId, day: reconciliationDays.day, timeZone: usageSources.timeZone, lookbackDays: usageSources.lookbackDays })
    .from(reconciliationDays)
    .innerJoin(usageSources, eq(usageSources.id, reconciliationDays.sourceId))
    .where(and(gte(reconciliationDays.day, since), gt(reconciliationDays.heldReservations, 0), eq(usageSources.enabled, true)));
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
  return { sources: bySource.size, days };
}
