import type { Db } from "@/db/client";
import { fireAlert } from "@/lib/alerts/fire";
import { unitLabel } from "@/lib/limits/guarantee";
import { formatCount, formatMoney } from "@/lib/format";
import type { ReconciliationDay } from "./types";
import type { Drift } from "./types";
import { driftDirectionSentence, driftPercentText } from "./words";

// The reconciliation alert: once per target and provider day (its dedupe key), however often the
// day is compared and by however many workers, so a revised re-pull never alerts twice.

export type DriftTarget = { kind: "endpoint" | "budget"; id: number; key: string; unit: string };

export function reconciliationDedupeKey(target: Pick<DriftTarget, "kind" | "id">, day: string): string {
  return `reconciliation:${target.kind}:${target.id}:${day}`;
}

export function reconciliationMessage(target: DriftTarget, row: ReconciliationDay, drift: Drift, currency: string, zone: string): string {
  const side = (units: number, micros: number) => `${formatMoney(micros, currency)} (${formatCount(units)} ${unitLabel(target.unit, units)})`;
  return (
    `${target.kind === "budget" ? "Budget " : ""}${target.key} on ${row.day} (${zone} day): the provider billed ${side(row.billedUnits, row.billedMicros)}, ` +
    `Ceilings charged ${side(row.chargedUnits, row.chargedMicros)}, ${driftPercentText(drift)}: ${driftDirectionSentence(drift)}.`
  );
}

/** Fires the alert for one compared day over its threshold; true when this call fired it. */
export function fireReconciliationAlert(
  db: Db,
  p: { target: DriftTarget; row: ReconciliationDay; drift: Drift; currency: string; zone: string },
): Promise<boolean> {
  const { target, row, drift } = p;
  return fireAlert(db, {
    kind: "reconciliation",
    dedupeKey: reconciliationDedupeKey(target, row.day),
    endpointId: target.kind === "endpoint" ? target.id : null,
    budgetId: target.kind === "budget" ? target.id : null,
    windowStart: row.dayStart,
    message: reconciliationMessage(target, row, drift, p.currency, p.zone),
    details: {
      day: row.day,
      sourceId: row.sourceId,
      ...(target.kind === "budget" ? { budgetId: target.id, budgetKey: target.key } : {}),
      billedUnits: row.billedUnits,
      chargedUnits: row.chargedUnits,
      diffUnits: drift.diffUnits,
      billedMicros: row.billedMicros,
      chargedMicros: row.chargedMicros,
      diffMicros: drift.diffMicros,
      percent: Math.round(drift.percent * 100) / 100,
      currency: p.currency,
      from: row.dayStart.toISOString(),
      to: row.dayEnd.toISOString(),
    },
  });
}
