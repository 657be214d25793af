import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { refusals } from "@/db/schema";
import { keysetCursorText } from "@/lib/keyset";
import type { Gate } from "@/lib/vocabulary";
import type { RefusalFilters, RefusalPosition } from "./filters";
import { cursorCondition, filterConditions, whereAll } from "./where";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export const refusalColumns = {
  id: refusals.id,
  at: refusals.at,
  lastAt: refusals.lastAt,
  endpointId: refusals.endpointId,
  endpointKey: refusals.endpointKey,
  ceilingId: refusals.ceilingId,
  gate: refusals.gate,
  caller: refusals.caller,
  destination: refusals.destination,
  amount: refusals.amount,
  remaining: refusals.remaining,
  count: refusals.count,
  requestId: refusals.requestId,
  detail: refusals.detail,
  cursor: keysetCursorText(refusals.at, refusals.id),
};

export type RefusalRow = {
  id: number;
  at: Date;
  lastAt: Date;
  endpointId: number | null;
  endpointKey: string;
  ceilingId: number | null;
  gate: Gate;
  caller: string;
  destination: string;
  amount: number;
  remaining: number | null;
  count: number;
  requestId: string | null;
  detail: string | null;
  /** This row's (at, id) as a page cursor. */
  cursor: string;
};

export type RefusalPage = {
  rows: RefusalRow[];
  /** Cursor for the page of newer rows, or null when this is the newest page. */
  newer: string | null;
  /** Cursor for the page of older rows, or null when there are none. */
  older: string | null;
};

type PageParams = { filters: RefusalFilters; position?: RefusalPosition; limit?: number };

function pageLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, Math.trunc(limit ?? DEFAULT_PAGE_SIZE)), MAX_PAGE_SIZE);
}

/** Whether a position walks up from `after` (ascending, shown reversed) or down from the top or `before`. */
function walksUp(position: RefusalPosition): boolean {
  return position.after !== undefined && position.before === undefined;
}

/** The query behind one page, unexecuted: listRefusals runs it, the benchmark explains it. */
export function refusalPageQuery(db: Db, params: PageParams) {
  const limit = pageLimit(params.limit);
  const position = params.position ?? {};
  const conditions = filterConditions(params.filters);
  if (walksUp(position) && position.after) conditions.push(cursorCondition(position.after, "newer"));
  else if (position.before) conditions.push(cursorCondition(position.before, "older"));
  // Spelled out to match the indexes, which drizzle creates as DESC NULLS LAST: a bare DESC means
  // NULLS FIRST, and Postgres then sorts the whole match instead of reading the index in order.
  const order = walksUp(position)
    ? [sql`${refusals.at} asc nulls first`, sql`${refusals.id} asc nulls first`]
    : [sql`${refusals.at} desc nulls last`, sql`${refusals.id} desc nulls last`];
  return db
    .select(refusalColumns)
    .from(refusals)
    .where(whereAll(conditions))
    .orderBy(...order)
    .limit(limit + 1);
}

/**
 * One page of refusals, newest first, by keyset on (at, id): no OFFSET, so a page deep in two
 * million rows costs what the first does, and refusals arriving meanwhile (newer by definition)
 * neither shift nor repeat the older pages.
 */
export async function listRefusals(db: Db, params: PageParams): Promise<RefusalPage> {
  const limit = pageLimit(params.limit);
  const position = params.position ?? {};
  const rows = await refusalPageQuery(db, params);
  if (walksUp(position)) {
    const page = rows.slice(0, limit).reverse();
    return { rows: page, newer: rows.length > limit ? (page[0]?.cursor ?? null) : null, older: page.at(-1)?.cursor ?? null };
  }
  const page = rows.slice(0, limit);
  // A page reached by going older always has the rows it came from above it.
  const newer = position.before ? (page[0]?.cursor ?? null) : null;
  return { rows: page, newer, older: rows.length > limit ? (page.at(-1)?.cursor ?? null) : null };
}
