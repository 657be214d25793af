import { and, asc, desc, eq, gt, inArray, isNull, lt, or, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, changeRequests, endpoints, type ChangeRequest } from "@/db/schema";
import type { ChangeRequestState } from "./types";

// The reads of the change requests pages, the overview and the endpoint page.

/** A request with the keys of what it touches, for links. */
export type ChangeRequestView = ChangeRequest & { endpointKey: string | null; budgetKey: string | null };

function viewQuery(db: Db) {
  return db
    .select({ request: changeRequests, endpointKey: endpoints.key, budgetKey: budgets.key })
    .from(changeRequests)
    .leftJoin(endpoints, eq(endpoints.id, changeRequests.endpointId))
    .leftJoin(budgets, eq(budgets.id, changeRequests.budgetId));
}

const toView = (r: { request: ChangeRequest; endpointKey: string | null; budgetKey: string | null }): ChangeRequestView => ({
  ...r.request,
  endpointKey: r.endpointKey,
  budgetKey: r.budgetKey,
});

export type ListChangeRequestsParams = { state?: ChangeRequestState; endpointId?: number; budgetId?: number; limit?: number; cursor?: number };

/** Newest first, a page at a time: `nextCursor` is the id to pass as `cursor` for the next page. */
export async function listChangeRequests(db: Db, p: ListChangeRequestsParams = {}): Promise<{ rows: ChangeRequestView[]; nextCursor: number | null }> {
  const limit = Math.min(Math.max(Math.trunc(p.limit ?? 50), 1), 200);
  const where: SQL[] = [];
  if (p.state) where.push(eq(changeRequests.state, p.state));
  if (p.endpointId !== undefined) where.push(eq(changeRequests.endpointId, p.endpointId));
  if (p.budgetId !== undefined) where.push(eq(changeRequests.budgetId, p.budgetId));
  if (p.cursor !== undefined) where.push(lt(changeRequests.id, p.cursor));
  const rows = await viewQuery(db)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(changeRequests.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(toView);
  return { rows: page, nextCursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null };
}

export async function getChangeRequest(db: Db, id: number): Promise<ChangeRequestView | null> {
  if (!Number.isSafeInteger(id) || id <= 0) return null;
  const [row] = await viewQuery(db).where(eq(changeRequests.id, id));
  return row ? toView(row) : null;
}

/**
 * The requests still waiting on an endpoint (not yet past their expiry), oldest first: its own and
 * those of the budgets it is a member of.
 */
export async function pendingForEndpoint(db: Db, endpointId: number, now: Date = new Date()): Promise<ChangeRequestView[]> {
  const memberOf = db.select({ id: budgetMembers.budgetId }).from(budgetMembers).where(eq(budgetMembers.endpointId, endpointId));
  const rows = await viewQuery(db)
    .where(
      and(
        or(eq(changeRequests.endpointId, endpointId), inArray(changeRequests.budgetId, memberOf)),
        eq(changeRequests.state, "pending"),
        gt(changeRequests.expiresAt, now),
      ),
    )
    .orderBy(asc(changeRequests.id));
  return rows.map(toView);
}

/** Every request still waiting (the overview), oldest first. */
export async function pendingChangeRequests(db: Db, now: Date = new Date()): Promise<ChangeRequestView[]> {
  const rows = await viewQuery(db)
    .where(and(eq(changeRequests.state, "pending"), gt(changeRequests.expiresAt, now)))
    .orderBy(asc(changeRequests.id));
  return rows.map(toView);
}

/** Break glass not yet acknowledged by another admin: the overview shows each until it is. */
export async function unacknowledgedBreakGlass(db: Db): Promise<ChangeRequestView[]> {
  const rows = await viewQuery(db)
    .where(and(eq(changeRequests.breakGlass, true), isNull(changeRequests.acknowledgedAt)))
    .orderBy(asc(changeRequests.decidedAt), asc(changeRequests.id));
  return rows.map(toView);
}
