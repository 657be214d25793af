import { InputError } from "@/lib/errors";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, limitOverrides, type Ceiling, type Endpoint, type NewCeiling } from "@/db/schema";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import type { NewAuditEvent } from "@/db/schema/audit-events";
import { actorName } from "@/lib/audit/actor";
import { sqlState } from "@/db/sql-state";
import { budgetKeysCharging, checkMemberCurrency } from "@/lib/budgets/write";
import { controlDetails, isChangeControl, requireApproval, type ChangeControl } from "@/lib/control/context";
import { ChangeControlError } from "@/lib/control/errors";
import { isNewValueRaise, loweredPrices } from "@/lib/control/raise";
import { forgetCallerTotals } from "@/lib/counters/caller-totals";
import { lockClosedWindows } from "@/lib/counters/closed-windows";
import { formatCount } from "@/lib/format";
import { CatalogError } from "@/lib/limits/errors";
import { billingMonthCeilings, isBillingDayRaise } from "./billing-day";
import { isAddRaise, recentlyRemovedParts } from "./re-add";
import { planValuesOnCeiling } from "@/lib/plans/read";
import { ceilingSpecOf } from "./read";
import { type CeilingSpec, ceilingIdentity, type EndpointFields, type EndpointSpec } from "./spec";
import { newOverrideRows } from "@/lib/limits/overrides";

// The catalog's writes, each inside the caller's transaction with its one audit event. The
// dashboard (lib/catalog/change.ts) and a catalog file (lib/catalog/file.ts) both go through these,
// after taking the endpoint lock, so a change waits for batches in flight and binds the next one.

/**
 * A change's transaction, who makes it and why. `changeControl`: the permission to raise (an
 * approved request, break glass, or setup code; lib/control/context.ts); without it a raise here
 * is refused with approval_required, whichever verb or file apply called the write.
 */
export type Change = { tx: Db; actor: AuditActor; reason: string; details?: Record<string, unknown>; changeControl?: ChangeControl };

/** The endpoint's advisory lock, exclusive: the same one a kill or a value edit takes. */
export async function lockEndpoint(tx: Db, endpointId: number): Promise<void> {
  await tx.execute(sql`select ceilings.lock_endpoints_for_change(array[${endpointId}]::int[])`);
}

/** The endpoint row after its lock, so the version checked is the one in force. */
export async function lockedEndpoint(tx: Db, key: string): Promise<Endpoint> {
  const [found] = await tx.select({ id: endpoints.id }).from(endpoints).where(eq(endpoints.key, key));
  if (!found) throw new CatalogError("not_found", `no endpoint '${key}'`);
  await lockEndpoint(tx, found.id);
  const [row] = await tx.select().from(endpoints).where(eq(endpoints.id, found.id)).for("update");
  if (!row) throw new CatalogError("not_found", `no endpoint '${key}'`);
  return row;
}

function ceilingRow(endpointId: number, c: CeilingSpec, actor: AuditActor): NewCeiling {
  const killed = c.killed === true && c.value > 0;
  return {
    endpointId,
    metric: c.metric,
    scope: c.scope,
    window: c.window,
    windowSeconds: c.windowSeconds ?? null,
    destinationKind: c.destinationKind ?? null,
    value: killed ? 0 : c.value,
    valueBeforeKill: killed ? c.value : null,
    killedAt: killed ? new Date() : null,
    killedBy: killed ? actorName(actor) : null,
    minValue: c.min,
    maxValue: c.max,
    defaultValue: c.default,
    alertThresholds: c.alertThresholds,
  };
}

/** Records one event of a change to an endpoint, with the change's actor, reason and details. */
export function recordChange(
  p: Change,
  endpoint: Pick<Endpoint, "id" | "key">,
  event: Omit<NewAuditEvent, "actorType" | "actor" | "reason" | "endpointId" | "endpointKey">,
) {
  return recordAudit(p.tx, {
    ...auditOf(p.actor, endpoint),
    reason: p.reason,
    ...event,
    details: { ...event.details, ...p.details, ...controlDetails(p.changeControl) },
  });
}

export function fieldsOf(e: Endpoint): EndpointFields {
  return {
    name: e.name,
    unit: e.unit,
    parts: e.parts.map((p) => ({ name: p.name, pricePico: p.pricePico })),
    currency: e.currency,
    planAllowance: e.planAllowance,
    billingDay: e.billingDay,
    perCallMax: e.perCallMax,
    throttlePerMinute: e.throttlePerMinute,
    throttleFailOpen: e.throttleFailOpen,
  };
}

/** Creates an endpoint with its ceilings and overrides; one endpoint.create event holds it all. */
export async function insertEndpoint(p: Change, spec: EndpointSpec): Promise<Endpoint> {
  const { key, ceilings: specs, overrides, archived, ...fields } = spec;
  // A new ceiling above its default is a raise, as on an existing endpoint (insertCeiling). There
  // is no request kind for a new endpoint: it is created at its defaults, then its raises asked
  // for. A catalog file does that itself (withholdRaises); setup code and appliers pass a control.
  const above = specs.filter((c) => isNewValueRaise(c));
  if (above.length > 0 && !isChangeControl(p.changeControl)) {
    const list = above.map((c) => `${ceilingIdentity(c)} at ${formatCount(c.value)} (default ${formatCount(c.default)})`).join(", ");
    throw new ChangeControlError(
      "approval_required",
      `new endpoint ${key}: ${list} above its default is a raise and needs a second admin: create the endpoint with each ceiling at its default, then ask for the raise`,
    );
  }
  let row: Endpoint | undefined;
  try {
    [row] = await p.tx
      .insert(endpoints)
      .values({ key, ...fields, archivedAt: archived ? new Date() : null, archivedBy: archived ? actorName(p.actor) : null })
      .returning();
  } catch (error) {
    if (sqlState(error) === "23505")
      throw new CatalogError("duplicate_key", `an endpoint with key '${key}' already exists (keys are unique, also among archived endpoints)`);
    throw error;
  }
  if (!row) throw new Error("insert returned no endpoint");
  const created = await p.tx
    .insert(ceilings)
    .values(specs.map((c) => ceilingRow(row.id, c, p.actor)))
    .returning();
  for (const o of overrides) {
    const target = created.find((c) => c.scope === "caller" && c.metric === o.metric && c.window === o.window);
    const rows = target ? newOverrideRows(target.limitId, [o], (message) => InputError.of(`${key}: ${message}`)) : [];
    if (rows.length > 0) await p.tx.insert(limitOverrides).values(rows);
  }
  await recordChange(p, row, {
    action: "endpoint.create",
    details: { after: { ...fields, archived }, ceilings: created.map((c) => ({ id: c.id, ...ceilingSpecOf(c) })), overrides },
  });
  return row;
}

export type FieldChange = { field: keyof EndpointFields; before: unknown; after: unknown };

/** Whether a field differs; the parts are a list, compared by their names and prices in order. */
export function fieldDiffers(field: keyof EndpointFields, before: EndpointFields, after: EndpointFields): boolean {
  const partsKey = (e: EndpointFields) => e.parts.map((p) => `${p.name}=${p.pricePico}`).join(",");
  return field === "parts" ? partsKey(before) !== partsKey(after) : before[field] !== after[field];
}

/** Changes the given fields of a locked endpoint; returns what changed (nothing: no write, no event). */
export async function updateEndpointFields(p: Change, endpoint: Endpoint, next: EndpointFields): Promise<FieldChange[]> {
  const before = fieldsOf(endpoint);
  const changes = (Object.keys(before) as (keyof EndpointFields)[])
    .filter((f) => fieldDiffers(f, before, next))
    .map((field) => ({ field, before: before[field], after: next[field] }));
  if (changes.length === 0) return [];
  if (next.perCallMax > endpoint.perCallMax) {
    requireApproval(p.changeControl, `${endpoint.key} per-call max ${formatCount(endpoint.perCallMax)} → ${formatCount(next.perCallMax)}`, {
      kind: "endpoint.per_call_max",
      change: { endpointKey: endpoint.key, perCallMax: next.perCallMax },
    });
  }
  // A price lowered where a live budget charges the endpoint: the same money admits more calls.
  const lowered = fieldDiffers("parts", before, next) ? loweredPrices(endpoint.parts, next.parts, await recentlyRemovedParts(p.tx, endpoint.id)) : [];
  if (lowered.length > 0) {
    const charging = await budgetKeysCharging(p.tx, endpoint.id);
    if (charging.length > 0) {
      requireApproval(p.changeControl, `${endpoint.key} prices lowered (${lowered.join("; ")}) while budget ${charging.join(", ")} charges it`, {
        kind: "endpoint.prices",
        change: { endpointKey: endpoint.key, parts: next.parts.map((x) => ({ name: x.name, pricePico: x.pricePico })) },
      });
    }
  }
  // A new billing day starts a new billing month for the endpoint's billing_month counters (lib/catalog/billing-day.ts).
  if (next.billingDay !== endpoint.billingDay) {
    const monthly = await billingMonthCeilings(p.tx, endpoint.id);
    if (isBillingDayRaise(monthly, endpoint.billingDay, next.billingDay)) {
      requireApproval(
        p.changeControl,
        `${endpoint.key} billing day ${endpoint.billingDay} → ${next.billingDay} (it starts a new billing month for its ${monthly.length} billing_month ceiling(s), forgiving what they counted this month)`,
        {
          kind: "endpoint.billing_day",
          change: { endpointKey: endpoint.key, billingDay: next.billingDay },
        },
      );
    }
  }
  if (next.currency !== endpoint.currency) await checkMemberCurrency(p.tx, endpoint, next.currency);
  if (next.billingDay !== endpoint.billingDay) {
    // The accounts' 30-day totals of its billing_month ceilings hold months by the old day: set
    // aside, under the lock a build holds, so none built by the old day is written after this.
    await lockClosedWindows(p.tx, endpoint.id);
    await forgetCallerTotals(p.tx, [endpoint.id]);
  }
  await p.tx
    .update(endpoints)
    .set({ ...next, version: sql`${endpoints.version} + 1`, updatedAt: new Date() })
    .where(eq(endpoints.id, endpoint.id));
  await recordChange(p, endpoint, {
    action: "endpoint.update",
    details: { changes: Object.fromEntries(changes.map((c) => [c.field, { before: c.before, after: c.after }])) },
  });
  return changes;
}

/**
 * Records a change to one of the endpoint's ceilings, and moves the endpoint's version so a form
 * opened on the endpoint before it sees a conflict instead of saving over it.
 */
export async function recordCeilingChange(p: Change, endpoint: Endpoint, event: Parameters<typeof recordChange>[2]): Promise<void> {
  await p.tx
    .update(endpoints)
    .set({ version: sql`${endpoints.version} + 1`, updatedAt: new Date() })
    .where(eq(endpoints.id, endpoint.id));
  await recordChange(p, endpoint, event);
}

export async function insertCeiling(p: Change, endpoint: Endpoint, spec: CeilingSpec): Promise<Ceiling> {
  // Killed or not: a killed ceiling restores to its value, instantly. Also a raise: standing above
  // a ceiling of the same identity removed in the last 24 hours (lib/catalog/re-add.ts).
  const added = isChangeControl(p.changeControl) ? { raise: false, removed: null } : await isAddRaise(p.tx, endpoint.id, spec);
  if (added.raise) {
    const why =
      isNewValueRaise(spec) || added.removed === null
        ? `above its default ${formatCount(spec.default)}`
        : `default ${formatCount(spec.default)}, where one removed in the last 24 hours stood at ${formatCount(added.removed)}`;
    requireApproval(p.changeControl, `a new ceiling on ${endpoint.key} at ${formatCount(spec.value)}, ${why},`, {
      kind: "ceiling.add",
      change: { endpointKey: endpoint.key, ceiling: spec },
    });
  }
  const [row] = await p.tx
    .insert(ceilings)
    .values(ceilingRow(endpoint.id, spec, p.actor))
    .returning();
  if (!row) throw new Error("insert returned no ceiling");
  await recordCeilingChange(p, endpoint, {
    action: "ceiling.add",
    ceilingId: row.id,
    appliedValue: row.value,
    details: { after: ceilingSpecOf(row) },
  });
  return row;
}

/**
 * Removes a ceiling: it stops counting from the next batch on. Its counters go with it (the audit
 * event keeps its definition, the reservations keep the spend); refusals keep their rows.
 */
export async function deleteCeiling(p: Change, endpoint: Endpoint, ceiling: Ceiling): Promise<void> {
  // The plans' values on it go with it (cascade): the event keeps them, so nothing vanishes unlogged.
  const planValues = await planValuesOnCeiling(p.tx, ceiling.id);
  await p.tx.delete(ceilings).where(and(eq(ceilings.id, ceiling.id), eq(ceilings.endpointId, endpoint.id)));
  await recordCeilingChange(p, endpoint, {
    action: "ceiling.remove",
    ceilingId: ceiling.id,
    previousValue: ceiling.value,
    details: { before: ceilingSpecOf(ceiling), ...(planValues.length > 0 ? { planValues } : {}) },
  });
}

export async function setArchived(p: Change, endpoint: Endpoint, archived: boolean): Promise<void> {
  // An archived endpoint refuses every call: taking it back into use raises what it may spend.
  if (!archived) requireApproval(p.changeControl, `unarchiving ${endpoint.key}`, { kind: "endpoint.unarchive", change: { endpointKey: endpoint.key } });
  await p.tx
    .update(endpoints)
    .set({
      archivedAt: archived ? new Date() : null,
      archivedBy: archived ? actorName(p.actor) : null,
      version: sql`${endpoints.version} + 1`,
      updatedAt: new Date(),
    })
    .where(eq(endpoints.id, endpoint.id));
  await recordChange(p, endpoint, { action: archived ? "endpoint.archive" : "endpoint.unarchive", details: {} });
}
