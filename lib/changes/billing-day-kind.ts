import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { ceilings, endpoints, usage, type Ceiling, type Endpoint } from "@/db/schema";
import { isBillingDayRaise } from "@/lib/catalog/billing-day";
import { CatalogError } from "@/lib/limits/errors";
import { worstCases } from "@/lib/catalog/worst-case";
import { fieldsOf, lockedEndpoint, updateEndpointFields } from "@/lib/catalog/write";
import { billingMonthWindow } from "@/lib/limits/windows";
import { formatCount } from "@/lib/format";
import { ceilingLabel, parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type KindHandler, movedSince, staleMessage, type Worst } from "./prepared";

// endpoint.billing_day: an endpoint's billing day, asked for when the endpoint has a billing_month
// ceiling (lib/catalog/billing-day.ts): the new day starts a new billing month for its counters,
// forgiving what the month in force had counted. Applied under the endpoint's lock through the
// endpoint edit's own write (updateEndpointFields), which refuses it without approval.
//
// The worst case shown is the endpoint's worst case a day from now, as the other endpoint kinds
// show it (its global ceilings; lib/catalog/worst-case.ts), with each global billing_month ceiling
// standing at what it still lets through in its month: its value less what it has counted (settled
// and held) in the month in force before, and in the month the new day puts in force after
// (usually nothing: a new month). The difference is the spend the change forgives; the summary names
// what each billing_month ceiling (every scope) has counted.

const Key = z.string({ error: "an endpoint key is required" }).min(1, "an endpoint key is required").max(64);
const BillingDay = z.strictObject({
  endpointKey: Key,
  billingDay: z
    .number({ error: "billing day must be a whole number" })
    .int("billing day must be a whole number")
    .min(1, "billing day must be 1 or more")
    .max(28, "billing day must be at most 28"),
});

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Settled plus held of each ceiling in the window starting at `start`, over every scope key (global: the one '' key). */
async function countedIn(db: Db, rows: readonly Ceiling[], start: Date): Promise<Map<number, number>> {
  if (rows.length === 0) return new Map();
  const counted = await db
    .select({ ceilingId: usage.ceilingId, n: sql<number>`coalesce(sum(${usage.settled} + ${usage.held}), 0)`.mapWith(Number) })
    .from(usage)
    .where(
      and(
        inArray(
          usage.ceilingId,
          rows.map((r) => r.id),
        ),
        eq(usage.windowStart, start),
      ),
    )
    .groupBy(usage.ceilingId);
  return new Map(counted.map((r) => [r.ceilingId, r.n]));
}

/** The worst case a day with each billing_month ceiling at what is left of its month. */
function worstLeft(rows: readonly Ceiling[], e: Endpoint, counted: ReadonlyMap<number, number>): Worst {
  const left = rows.map((c) => (c.window === "billing_month" ? { ...c, value: Math.max(0, c.value - (counted.get(c.id) ?? 0)) } : c));
  const w = worstCases(left, { perCallMax: e.perCallMax, parts: e.parts }).day;
  return w === null ? { units: null, micros: null } : { units: w.units, micros: w.micros };
}

export const endpointBillingDay: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(BillingDay, raw);
    const [endpoint] = await db.select().from(endpoints).where(eq(endpoints.key, change.endpointKey));
    if (!endpoint) throw new ChangeControlError("not_found", `no endpoint '${change.endpointKey}'`);
    if (endpoint.billingDay === change.billingDay) throw new ChangeControlError("unchanged", `the billing day is already ${change.billingDay}`);
    const rows = await db.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id)).orderBy(asc(ceilings.id));
    const monthly = rows.filter((c) => c.window === "billing_month");
    const now = new Date();
    const was = billingMonthWindow(now, endpoint.billingDay);
    const will = billingMonthWindow(now, change.billingDay);
    const before = await countedIn(db, monthly, was.start);
    const after = await countedIn(db, monthly, will.start);
    const forgiven = monthly.map((c) => `${ceilingLabel(c)} ${formatCount(before.get(c.id) ?? 0)} counted`).join(", ");
    const moves = `the billing month in force moves from ${day(was.start)}..${day(was.end)} to ${day(will.start)}..${day(will.end)}`;
    return {
      ceilingId: null,
      budgetId: null,
      confirm: null,
      mayEnd: false,
      change,
      before: { billingDay: endpoint.billingDay },
      after: { billingDay: change.billingDay },
      summary: `${endpoint.key} billing day ${endpoint.billingDay} → ${change.billingDay}${monthly.length > 0 ? `: ${moves}, and its billing_month counters start again (forgives ${forgiven})` : ""}`,
      endpointId: endpoint.id,
      worstBefore: worstLeft(rows, endpoint, before),
      worstAfter: worstLeft(rows, endpoint, after),
      currency: endpoint.currency,
      raise: isBillingDayRaise(rows, endpoint.billingDay, change.billingDay),
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(BillingDay, request.change);
    let endpoint: Endpoint;
    try {
      endpoint = await lockedEndpoint(tx, change.endpointKey);
    } catch (error) {
      if (error instanceof CatalogError && error.code === "not_found") return { stale: error.message };
      throw error;
    }
    const moved = movedSince(request.before, { billingDay: endpoint.billingDay });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await updateEndpointFields({ tx, actor, reason: request.reason, changeControl: control }, endpoint, {
      ...fieldsOf(endpoint),
      billingDay: change.billingDay,
    });
    return { stale: null, raised: null };
  },
};
