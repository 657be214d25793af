import { and, asc, count, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { alertDeliveries, alertDestinations, alerts, budgets, endpoints } from "@/db/schema";
import { alertKinds, alertLinks, type AlertLinks } from "./kinds";
import type { OutgoingAlert } from "./payload";

// Reads for the inbox: unacknowledged first, newest first within each group, with the state of
// every delivery of each alert.

export const InboxFilters = z.object({
  kind: z.enum(alertKinds).optional().catch(undefined),
  state: z.enum(["open", "acknowledged", "all"]).catch("all").default("all"),
  limit: z.coerce.number().int().min(1).max(200).catch(50).default(50),
});
export type InboxFilters = z.infer<typeof InboxFilters>;

export type DeliveryView = {
  destinationId: number;
  destinationName: string;
  destinationKind: "slack" | "webhook" | "email";
  state: "pending" | "delivered" | "failed";
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  deliveredAt: Date | null;
};

/** The alert its destinations received, with who acknowledged it and how each delivery went. */
export type InboxAlert = OutgoingAlert & {
  /** The budget it is about (a budget's threshold, kill, restore or large adjustment), by key. */
  budgetKey: string | null;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
  links: AlertLinks;
  deliveries: DeliveryView[];
};

export type InboxPage = { alerts: InboxAlert[]; unacknowledged: number; total: number; kinds: { kind: string; n: number }[] };

export async function listInbox(db: Db, filters: InboxFilters): Promise<InboxPage> {
  const where: SQL[] = [];
  if (filters.kind) where.push(eq(alerts.kind, filters.kind));
  if (filters.state === "open") where.push(isNull(alerts.acknowledgedAt));
  if (filters.state === "acknowledged") where.push(sql`${alerts.acknowledgedAt} is not null`);
  const rows = await db
    .select({ alert: alerts, endpointKey: endpoints.key, budgetKey: budgets.key })
    .from(alerts)
    .leftJoin(endpoints, eq(endpoints.id, alerts.endpointId))
    .leftJoin(budgets, eq(budgets.id, alerts.budgetId))
    .where(where.length > 0 ? and(...where) : undefined)
    .orderBy(sql`${alerts.acknowledgedAt} is not null`, desc(alerts.createdAt), desc(alerts.id))
    .limit(filters.limit);
  const ids = rows.map((r) => r.alert.id);
  const deliveries =
    ids.length === 0
      ? []
      : await db
          .select({ d: alertDeliveries, name: alertDestinations.name, kind: alertDestinations.kind })
          .from(alertDeliveries)
          .innerJoin(alertDestinations, eq(alertDestinations.id, alertDeliveries.destinationId))
          .where(inArray(alertDeliveries.alertId, ids))
          .orderBy(asc(alertDestinations.name));
  const byAlert = new Map<number, DeliveryView[]>();
  for (const { d, name, kind } of deliveries) {
    const list = byAlert.get(d.alertId) ?? [];
    list.push({
      destinationId: d.destinationId,
      destinationName: name,
      destinationKind: kind,
      state: d.state,
      attempts: d.attempts,
      nextAttemptAt: d.nextAttemptAt,
      lastError: d.lastError,
      deliveredAt: d.deliveredAt,
    });
    byAlert.set(d.alertId, list);
  }
  const [counts] = await db
    .select({ total: count(), open: sql<number>`count(*) filter (where ${alerts.acknowledgedAt} is null)`.mapWith(Number) })
    .from(alerts);
  const kinds = await db.select({ kind: alerts.kind, n: count() }).from(alerts).groupBy(alerts.kind).orderBy(alerts.kind);
  return {
    alerts: rows.map(({ alert, endpointKey, budgetKey }) => ({
      ...alert,
      endpointKey: endpointKey ?? null,
      budgetKey: budgetKey ?? null,
      // An alert about a budget and no endpoint links to the budget's page.
      links: alertLinks({
        endpointKey: endpointKey ?? null,
        budgetKey: endpointKey ? null : (budgetKey ?? null),
        windowStart: alert.windowStart,
        createdAt: alert.createdAt,
        details: alert.details,
        kind: alert.kind,
      }),
      deliveries: byAlert.get(alert.id) ?? [],
    })),
    unacknowledged: counts?.open ?? 0,
    total: counts?.total ?? 0,
    kinds,
  };
}

/** The nav badge: alerts nobody has acknowledged yet. */
export async function countUnacknowledged(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(alerts).where(isNull(alerts.acknowledgedAt));
  return row?.n ?? 0;
}
