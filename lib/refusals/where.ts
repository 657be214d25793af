import { and, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { endpoints, refusals } from "@/db/schema";
import type { KeysetCursor } from "@/lib/keyset";
import type { RefusalFilters } from "./filters";

// The highest code point: every string that starts with a prefix sorts, bytewise, at or above the
// prefix and below prefix || U+10FFFF (a noncharacter no canonical key contains). With
// text_pattern_ops (bytewise order) the two bounds are exactly the prefix match, as one index range.
const MAX_CHAR = String.fromCodePoint(0x10ffff);

/**
 * The WHERE conditions of a filter set. The destination prefix is written as an explicit range on
 * the pattern operators, not as LIKE $1: a LIKE on a bound parameter cannot use the index once
 * Postgres switches a prepared statement to its generic plan.
 */
export function filterConditions(f: RefusalFilters): SQL[] {
  const where: SQL[] = [];
  if (f.endpoint) where.push(sql`${refusals.endpointId} = (select ${endpoints.id} from ${endpoints} where ${endpoints.key} = ${f.endpoint})`);
  if (f.gate) where.push(eq(refusals.gate, f.gate));
  if (f.caller !== undefined) where.push(eq(refusals.caller, f.caller));
  if (f.destination) {
    const p = f.destination;
    where.push(sql`${refusals.destination} ~>=~ ${p}`);
    // No starts_with() on top: the planner would multiply its guess into the range's estimate and
    // choose plans for a few hundred rows when tens of thousands match.
    where.push(sql`${refusals.destination} ~<~ ${p + MAX_CHAR}`);
  }
  if (f.from) where.push(gte(refusals.at, f.from));
  if (f.to) where.push(lt(refusals.at, f.to));
  return where;
}

/**
 * Rows strictly older (or newer) than a cursor, as a row comparison: Postgres turns it into one
 * index range on (…, at, id), so a deep page costs what the first does.
 */
export function cursorCondition(cursor: KeysetCursor, direction: "older" | "newer"): SQL {
  const at = sql`${cursor.at}::timestamptz`;
  return direction === "older"
    ? sql`(${refusals.at}, ${refusals.id}) < (${at}, ${cursor.id}::bigint)`
    : sql`(${refusals.at}, ${refusals.id}) > (${at}, ${cursor.id}::bigint)`;
}

export function whereAll(conditions: SQL[]): SQL | undefined {
  return conditions.length > 0 ? and(...conditions) : undefined;
}
