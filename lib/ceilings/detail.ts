import { asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, planLimitValues, plans, refusals, type AuditEvent, type Refusal } from "@/db/schema";
import { listOverrides, type OverrideRow } from "@/lib/limits/overrides";
import { listAuditEvents } from "@/lib/audit/log";
import { derivedDefault } from "@/lib/limits/guarantee";
import { buildOverviews, type EndpointOverview } from "./overview";
import { topScopes, type ScopeUsage } from "./usage";

/** An override on one of the endpoint's per-caller ceilings. */
export type CeilingOverride = Omit<OverrideRow, "id"> & { ceilingId: number };

export type PlanValue = { ceilingId: number; planKey: string; planName: string; isDefault: boolean; value: number };

export type EndpointDetail = EndpointOverview & {
  derivedDefault: { daily: number; sentence: string } | null;
  overrides: CeilingOverride[];
  /** The plans' values on each per-caller ceiling, by plan key. */
  planValues: PlanValue[];
  /** Busiest accounts of each per-caller ceiling in its open window, by ceiling id. */
  topCallers: Record<number, ScopeUsage[]>;
  adjustments: AuditEvent[];
  refusals: Refusal[];
};

/** Everything the endpoint page shows, or null for an unknown key. */
export async function getEndpointDetail(db: Db, key: string, now = new Date()): Promise<EndpointDetail | null> {
  const [endpoint] = await db.select().from(endpoints).where(eq(endpoints.key, key));
  if (!endpoint) return null;
  const [overview] = await buildOverviews(db, [endpoint], now);
  if (!overview) return null;
  const ceilingIds = overview.ceilings.map((c) => c.id);
  const overrides: CeilingOverride[] = (await listOverrides(db, "ceiling", ceilingIds)).map(({ id, ...o }) => ({ ceilingId: id, ...o }));
  const planValues =
    ceilingIds.length === 0
      ? []
      : await db
          .select({
            ceilingId: ceilings.id,
            planKey: plans.key,
            planName: plans.name,
            isDefault: plans.isDefault,
            value: planLimitValues.value,
          })
          .from(planLimitValues)
          .innerJoin(plans, eq(plans.id, planLimitValues.planId))
          .innerJoin(ceilings, eq(ceilings.limitId, planLimitValues.limitId))
          .where(inArray(ceilings.id, ceilingIds))
          .orderBy(asc(ceilings.id), asc(plans.key));
  const topCallers: Record<number, ScopeUsage[]> = {};
  for (const c of overview.ceilings.filter((v) => v.scope === "caller")) {
    topCallers[c.id] = await topScopes(db, c.id, now);
  }
  const { events } = await listAuditEvents(db, { endpoint: key, limit: 20 });
  const recentRefusals = await db
    .select()
    .from(refusals)
    .where(eq(refusals.endpointId, endpoint.id))
    // nulls last, as refusals_endpoint_at_idx is ordered: a plain desc sorts every refusal of the endpoint.
    .orderBy(sql`${refusals.at} desc nulls last`, sql`${refusals.id} desc nulls last`)
    .limit(20);
  return {
    ...overview,
    derivedDefault: derivedDefault(endpoint.planAllowance, endpoint.unit),
    overrides,
    planValues,
    topCallers,
    adjustments: events,
    refusals: recentRefusals,
  };
}

export type KilledEndpoint = { key: string; name: string; killedAt: Date | null; killedBy: string | null; ceilings: number };
export type KillState = {
  killed: KilledEndpoint[];
  lastKillRefusal: Pick<Refusal, "endpointKey" | "caller" | "lastAt" | "count"> | null;
};

/** What the kill banner shows: every killed endpoint and the latest refusal proving a kill binds. */
export async function getKillState(db: Db): Promise<KillState> {
  const rows = await db
    .select({ key: endpoints.key, name: endpoints.name, killedAt: ceilings.killedAt, killedBy: ceilings.killedBy, value: ceilings.value })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(eq(ceilings.value, 0))
    .orderBy(desc(ceilings.killedAt), asc(endpoints.key));
  const byKey = new Map<string, KilledEndpoint>();
  for (const r of rows) {
    const seen = byKey.get(r.key);
    if (seen) {
      seen.ceilings += 1;
      continue;
    }
    byKey.set(r.key, { key: r.key, name: r.name, killedAt: r.killedAt, killedBy: r.killedBy, ceilings: 1 });
  }
  if (byKey.size === 0) return { killed: [], lastKillRefusal: null };
  const [last] = await db
    .select({ endpointKey: refusals.endpointKey, caller: refusals.caller, lastAt: refusals.lastAt, count: refusals.count })
    .from(refusals)
    .where(eq(refusals.gate, "kill_switch"))
    // nulls last, as refusals_gate_at_idx is ordered: a plain desc read every kill refusal on every page.
    .orderBy(sql`${refusals.at} desc nulls last`, sql`${refusals.id} desc nulls last`)
    .limit(1);
  return { killed: [...byKey.values()], lastKillRefusal: last ?? null };
}
