import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints, refusals } from "@/db/schema";
import { describeGuarantee } from "@/lib/limits/guarantee";
import type { CeilingMetric, CeilingScope, CeilingWindow } from "@/lib/vocabulary";
import { refusalColumns, type RefusalRow } from "./list";

export type RefusalCeiling = {
  id: number;
  metric: CeilingMetric;
  scope: CeilingScope;
  window: CeilingWindow;
  /** Its value now, which may differ from the value when the refusal happened. */
  valueNow: number;
  /** The guarantee it states today, as a sentence. */
  guarantee: string;
};

/** The budget that refused (gate budget): its remaining was money in its currency, not units. */
export type RefusalBudget = { key: string; currency: string; valueNow: number };

export type RefusalDetail = RefusalRow & {
  endpoint: { key: string; name: string; unit: string } | null;
  ceiling: RefusalCeiling | null;
  budget: RefusalBudget | null;
};

/** One refusal with its endpoint and the ceiling that said no (null when the gate had none). */
export async function getRefusal(db: Db, id: number): Promise<RefusalDetail | null> {
  if (!Number.isSafeInteger(id) || id < 1) return null;
  const [row] = await db
    .select({
      ...refusalColumns,
      epKey: endpoints.key,
      epName: endpoints.name,
      epUnit: endpoints.unit,
      epBillingDay: endpoints.billingDay,
      epPerCallMax: endpoints.perCallMax,
      cId: ceilings.id,
      cMetric: ceilings.metric,
      cScope: ceilings.scope,
      cWindow: ceilings.window,
      cWindowSeconds: ceilings.windowSeconds,
      cValue: ceilings.value,
      bKey: budgets.key,
      bCurrency: budgets.currency,
      bValue: budgets.value,
    })
    .from(refusals)
    .leftJoin(endpoints, eq(endpoints.id, refusals.endpointId))
    .leftJoin(ceilings, eq(ceilings.id, refusals.ceilingId))
    .leftJoin(budgets, eq(budgets.id, refusals.budgetId))
    .where(eq(refusals.id, id))
    .limit(1);
  if (!row) return null;
  const { epKey, epName, epUnit, epBillingDay, epPerCallMax, cId, cMetric, cScope, cWindow, cWindowSeconds, cValue, bKey, bCurrency, bValue, ...refusal } = row;
  const endpoint = epKey !== null && epName !== null && epUnit !== null ? { key: epKey, name: epName, unit: epUnit } : null;
  let ceiling: RefusalCeiling | null = null;
  if (cId !== null && cMetric !== null && cScope !== null && cWindow !== null && cValue !== null) {
    const c = { metric: cMetric, scope: cScope, window: cWindow, windowSeconds: cWindowSeconds, value: cValue };
    const guarantee = endpoint
      ? describeGuarantee(c, { key: endpoint.key, unit: endpoint.unit, billingDay: epBillingDay ?? 1, perCallMax: epPerCallMax ?? 1 })
      : `${cValue} ${cMetric}`;
    ceiling = { id: cId, metric: cMetric, scope: cScope, window: cWindow, valueNow: cValue, guarantee };
  }
  const budget = bKey !== null && bCurrency !== null && bValue !== null ? { key: bKey, currency: bCurrency, valueNow: bValue } : null;
  return { ...refusal, endpoint, ceiling, budget };
}
