import { asc, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, type Ceiling, type Endpoint } from "@/db/schema";
import { listOverrides } from "@/lib/limits/overrides";
import { CatalogError } from "@/lib/limits/errors";
import type { CeilingSpec, EndpointSpec } from "./spec";

// The catalog as it is in the database, in the spec's terms: what export writes, what plan compares
// a file against, and what the edit form starts from.

/** A ceiling row as a spec; a killed ceiling says so, with the value a restore puts back. */
export function ceilingSpecOf(c: Ceiling): CeilingSpec {
  const killed = c.value === 0 && c.valueBeforeKill !== null;
  return {
    metric: c.metric,
    scope: c.scope,
    window: c.window,
    ...(c.windowSeconds !== null ? { windowSeconds: c.windowSeconds } : {}),
    ...(c.destinationKind !== null ? { destinationKind: c.destinationKind } : {}),
    value: killed ? (c.valueBeforeKill ?? 0) : c.value,
    min: c.minValue,
    max: c.maxValue,
    default: c.defaultValue,
    alertThresholds: [...c.alertThresholds].sort((a, b) => a - b),
    ...(killed ? { killed: true } : {}),
  };
}

/** Every endpoint's key (archived ones too), in order: what the filter forms offer to pick from. */
export async function listEndpointKeys(db: Db): Promise<string[]> {
  const rows = await db.select({ key: endpoints.key }).from(endpoints).orderBy(asc(endpoints.key));
  return rows.map((r) => r.key);
}

export type CatalogEndpoint = { endpoint: Endpoint; ceilings: Ceiling[]; spec: EndpointSpec };

/** Every endpoint (archived ones too) with its ceilings and overrides, in key order. */
export async function readCatalog(db: Db, keys?: string[]): Promise<CatalogEndpoint[]> {
  const rows = await (keys ? db.select().from(endpoints).where(inArray(endpoints.key, keys)) : db.select().from(endpoints)).orderBy(asc(endpoints.key));
  if (rows.length === 0) return [];
  const ids = rows.map((e) => e.id);
  const ceilingRows = await db.select().from(ceilings).where(inArray(ceilings.endpointId, ids)).orderBy(asc(ceilings.id));
  const overrideRows = (
    await listOverrides(
      db,
      "ceiling",
      ceilingRows.map((c) => c.id),
    )
  ).map(({ id, ...o }) => ({ ceilingId: id, ...o }));
  return rows.map((endpoint) => {
    const own = ceilingRows.filter((c) => c.endpointId === endpoint.id);
    const byId = new Map(own.map((c) => [c.id, c]));
    const spec: EndpointSpec = {
      key: endpoint.key,
      name: endpoint.name,
      unit: endpoint.unit,
      parts: endpoint.parts.map((p) => ({ name: p.name, pricePico: p.pricePico })),
      currency: endpoint.currency,
      planAllowance: endpoint.planAllowance,
      billingDay: endpoint.billingDay,
      perCallMax: endpoint.perCallMax,
      throttlePerMinute: endpoint.throttlePerMinute,
      throttleFailOpen: endpoint.throttleFailOpen,
      archived: endpoint.archivedAt !== null,
      ceilings: own.map(ceilingSpecOf),
      overrides: overrideRows.flatMap((o) => {
        const c = byId.get(o.ceilingId);
        return c
          ? [
              {
                metric: c.metric,
                window: c.window,
                caller: o.caller,
                value: o.value,
                reason: o.reason,
                ...(o.expiresAt ? { until: o.expiresAt.toISOString() } : {}),
              },
            ]
          : [];
      }),
    };
    return { endpoint, ceilings: own, spec };
  });
}

export async function readCatalogEndpoint(db: Db, key: string): Promise<CatalogEndpoint> {
  const [found] = await readCatalog(db, [key]);
  if (!found) throw new CatalogError("not_found", `no endpoint '${key}'`);
  return found;
}

export async function endpointByKey(db: Db, key: string): Promise<Endpoint> {
  const [row] = await db.select().from(endpoints).where(eq(endpoints.key, key));
  if (!row) throw new CatalogError("not_found", `no endpoint '${key}'`);
  return row;
}
