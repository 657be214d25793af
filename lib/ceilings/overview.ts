import { asc, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { readBudgetStops, type BudgetStop } from "@/lib/budgets/read-stops";
import { ceilings, endpoints, type Ceiling, type Endpoint } from "@/db/schema";
import { countOverrides } from "@/lib/limits/overrides";
import { describeGuarantee } from "@/lib/limits/guarantee";
import { currentUsageTotals, usageSince, type UsageTotals } from "./usage";
import { billingMonthWindow, windowFor, type WindowSpan } from "@/lib/limits/windows";

/** At this share of a ceiling used (settled + held), it is shown as near its limit. */
export const NEAR_LIMIT_RATIO = 0.8;

export type CeilingState = "live" | "killed" | "near_limit";
/** An endpoint's state: its ceilings', or stopped by a budget it belongs to (killed, or a global one used up). */
export type EndpointState = CeilingState | "stopped";

export type CeilingView = Pick<
  Ceiling,
  | "id"
  | "metric"
  | "scope"
  | "window"
  | "windowSeconds"
  | "value"
  | "valueBeforeKill"
  | "minValue"
  | "maxValue"
  | "defaultValue"
  | "version"
  | "killedAt"
  | "killedBy"
> & {
  guarantee: string;
  /** The open calendar window; null for cooldowns, whose windows start at each first hit. */
  span: WindowSpan | null;
  /** Settled and held in the open window: all callers for a global ceiling, the busiest account for a per-caller one. */
  used: number;
  held: number;
  remaining: number;
  /** (used + held) / value; 1 when killed. */
  ratio: number;
  state: CeilingState;
  /** Accounts or destinations with usage in the open window. */
  scopes: number;
  totalUsed: number;
  totalHeld: number;
  overrides: number;
};

export type MonthToDate = { used: number; allowance: number; pace: number; span: WindowSpan };

export type EndpointOverview = Pick<
  Endpoint,
  "id" | "key" | "name" | "unit" | "planAllowance" | "billingDay" | "perCallMax" | "parts" | "currency" | "archivedAt" | "archivedBy" | "version"
> & {
  state: EndpointState;
  ceilings: CeilingView[];
  /** The budgets refusing its calls now (a killed one first); empty when none does. */
  budgetStops: BudgetStop[];
  monthToDate: MonthToDate | null;
  killedAt: Date | null;
  killedBy: string | null;
  /** Highest ratio of its ceilings, for ordering. */
  urgency: number;
};

export function ceilingView(c: Ceiling, e: Endpoint, totals: UsageTotals | undefined, overrides: number, now: Date): CeilingView {
  const t = totals ?? { scopes: 0, settled: 0, held: 0, busiest: 0 };
  const span = c.window === "first_hit" ? null : windowFor(c.window, { billingDay: e.billingDay }, now);
  const perScope = c.scope === "global";
  // For a per-caller ceiling the one that binds is the busiest account; the split is unknown here,
  // so its whole use is shown as settled.
  const used = perScope ? t.settled : c.scope === "caller" ? t.busiest : 0;
  const held = perScope ? t.held : 0;
  const killed = c.value === 0;
  const ratio = killed ? 1 : c.scope === "destination" ? 0 : (used + held) / c.value;
  return {
    id: c.id,
    metric: c.metric,
    scope: c.scope,
    window: c.window,
    windowSeconds: c.windowSeconds,
    value: c.value,
    valueBeforeKill: c.valueBeforeKill,
    minValue: c.minValue,
    maxValue: c.maxValue,
    defaultValue: c.defaultValue,
    version: c.version,
    killedAt: c.killedAt,
    killedBy: c.killedBy,
    guarantee: describeGuarantee(c, e),
    span,
    used,
    held,
    remaining: Math.max(0, c.value - used - held),
    ratio,
    state: killed ? "killed" : ratio >= NEAR_LIMIT_RATIO ? "near_limit" : "live",
    scopes: t.scopes,
    totalUsed: t.settled,
    totalHeld: t.held,
    overrides,
  };
}

/** Month to date against the plan allowance, from the endpoint's global units ceilings. */
async function monthToDate(db: Db, e: Endpoint, views: CeilingView[], now: Date): Promise<MonthToDate | null> {
  if (e.planAllowance === null) return null;
  const span = billingMonthWindow(now, e.billingDay);
  const pace = Math.round((e.planAllowance * (now.getTime() - span.start.getTime())) / (span.end.getTime() - span.start.getTime()));
  const units = views.filter((c) => c.metric === "units" && c.scope === "global");
  const monthly = units.find((c) => c.window === "billing_month");
  if (monthly) return { used: monthly.totalUsed + monthly.totalHeld, allowance: e.planAllowance, pace, span };
  const daily = units.find((c) => c.window === "utc_day");
  if (!daily) return null;
  return { used: await usageSince(db, daily.id, span.start, span.end), allowance: e.planAllowance, pace, span };
}

export async function buildOverviews(db: Db, rows: Endpoint[], now: Date): Promise<EndpointOverview[]> {
  const ids = rows.map((e) => e.id);
  if (ids.length === 0) return [];
  const allCeilings = await db.select().from(ceilings).where(inArray(ceilings.endpointId, ids)).orderBy(asc(ceilings.id));
  const ceilingIds = allCeilings.map((c) => c.id);
  const totals = await currentUsageTotals(db, ceilingIds, now);
  const overridesOf = await countOverrides(db, "ceiling", ceilingIds);
  const stopsOf = await readBudgetStops(db, { endpointIds: ids, now });

  const result: EndpointOverview[] = [];
  for (const e of rows) {
    const views = allCeilings.filter((c) => c.endpointId === e.id).map((c) => ceilingView(c, e, totals.get(c.id), overridesOf.get(c.id) ?? 0, now));
    const killed = views.filter((c) => c.state === "killed");
    const urgency = Math.max(0, ...views.map((c) => c.ratio));
    const firstKill = killed
      .map((c) => c.killedAt)
      .filter((d): d is Date => d !== null)
      .sort((a, b) => a.getTime() - b.getTime())[0];
    // A used-up budget refuses only calls that cost money: an endpoint with no price passes it.
    const priced = e.parts.some((part) => part.pricePico > 0);
    const budgetStops = (stopsOf.get(e.id) ?? []).filter((s) => s.reason === "killed" || priced);
    result.push({
      id: e.id,
      key: e.key,
      name: e.name,
      unit: e.unit,
      planAllowance: e.planAllowance,
      billingDay: e.billingDay,
      perCallMax: e.perCallMax,
      parts: e.parts,
      currency: e.currency,
      archivedAt: e.archivedAt,
      archivedBy: e.archivedBy,
      version: e.version,
      state: killed.length > 0 ? "killed" : budgetStops.length > 0 ? "stopped" : urgency >= NEAR_LIMIT_RATIO ? "near_limit" : "live",
      ceilings: views,
      budgetStops,
      monthToDate: await monthToDate(db, e, views, now),
      killedAt: firstKill ?? null,
      killedBy: killed.find((c) => c.killedBy !== null)?.killedBy ?? null,
      urgency,
    });
  }
  return result;
}

const stateRank: Record<EndpointState, number> = { killed: 0, stopped: 1, near_limit: 2, live: 3 };

/** Every endpoint with each ceiling in its open window: killed first, then stopped by a budget, then the fullest; archived last. */
export async function listEndpointsOverview(db: Db, now = new Date()): Promise<EndpointOverview[]> {
  const rows = await db.select().from(endpoints).orderBy(asc(endpoints.key));
  const views = await buildOverviews(db, rows, now);
  const archived = (e: EndpointOverview) => (e.archivedAt === null ? 0 : 1);
  return views.sort((a, b) => archived(a) - archived(b) || stateRank[a.state] - stateRank[b.state] || b.urgency - a.urgency || a.key.localeCompare(b.key));
}
