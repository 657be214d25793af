import { and, eq, getTableColumns, gte, like, lt, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { auditEvents, type AuditEvent } from "@/db/schema";
import { KeysetCursor, keysetCursorText } from "@/lib/keyset";

// Keyset pagination on (at, id) descending, which the audit_events_at_idx index serves: the page
// after N rows costs the same as the first, however long the log grows.

const isoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const AuditFilters = z.object({
  endpoint: z.string().trim().min(1).max(64).optional(),
  actor: z.string().trim().min(1).max(200).optional(),
  // A kind may have several parts (budget.override.set); a family is its first part (budget).
  action: z
    .string()
    .trim()
    .regex(/^[a-z_]+(\.[a-z_]+)*$/, "unknown kind")
    .optional(),
  from: isoInstant.optional(),
  to: isoInstant.optional(),
  cursor: KeysetCursor.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type AuditFilters = z.input<typeof AuditFilters>;

export type AuditPage = { events: AuditEvent[]; nextCursor: string | null };

/**
 * Audit events newest first. `action` matches a kind exactly ("ceiling.kill") or a family
 * ("ceiling" matches every ceiling.* event).
 */
export async function listAuditEvents(db: Db, input: AuditFilters = {}): Promise<AuditPage> {
  const f = AuditFilters.parse(input);
  const where: SQL[] = [];
  if (f.endpoint) where.push(eq(auditEvents.endpointKey, f.endpoint));
  if (f.actor) where.push(eq(auditEvents.actor, f.actor));
  if (f.action) {
    // The regex above admits only [a-z_.], so the family pattern carries no LIKE wildcards but "_".
    const family = `${f.action.replaceAll("_", "\\_")}.%`;
    where.push(f.action.includes(".") ? eq(auditEvents.action, f.action) : like(auditEvents.action, family));
  }
  if (f.from) where.push(gte(auditEvents.at, f.from));
  if (f.to) where.push(lt(auditEvents.at, f.to));
  if (f.cursor) {
    const c = f.cursor;
    const at = sql`${c.at}::timestamptz`;
    // A row comparison, which the (at, id) index can seek to; the equivalent OR cannot.
    const after = sql`(${auditEvents.at}, ${auditEvents.id}) < (${at}, ${c.id})`;
    where.push(after);
  }
  const rows = await db
    .select({
      ...getTableColumns(auditEvents),
      cursor: keysetCursorText(auditEvents.at, auditEvents.id),
    })
    .from(auditEvents)
    .where(where.length > 0 ? and(...where) : undefined)
    // NULLS LAST to match the index drizzle created (a bare DESC means NULLS FIRST and sorts instead).
    .orderBy(sql`${auditEvents.at} desc nulls last`, sql`${auditEvents.id} desc nulls last`)
    .limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  const events = page.map(({ cursor: _cursor, ...event }) => event);
  return { events, nextCursor: rows.length > f.limit && last ? last.cursor : null };
}

/** The distinct actors and kinds present, for the filter drop-downs. */
export async function listAuditFacets(db: Db): Promise<{ actors: string[]; actions: string[] }> {
  const actors = await db.selectDistinct({ v: auditEvents.actor }).from(auditEvents).orderBy(auditEvents.actor).limit(500);
  const actions = await db.selectDistinct({ v: auditEvents.action }).from(auditEvents).orderBy(auditEvents.action).limit(200);
  return { actors: actors.map((r) => r.v), actions: actions.map((r) => r.v) };
}
