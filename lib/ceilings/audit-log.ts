import { and, eq, getTableColumns, gte, like, lt, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { auditEvents, type AuditEvent } from "@/db/schema";
import { isRealUtcInstant } from "@/lib/http/strict-input";

// Keyset pagination on (at, id) descending, which the audit_events_at_idx index serves: the page
// after N rows costs the same as the first, however long the log grows. The cursor carries the
// timestamp at microsecond precision (as Postgres stores it), which a JS Date would truncate.

const isoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const AuditCursor = z
  .string()
  .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z_\d{1,15}$/, "invalid page cursor")
  // The shape alone lets "2026-13-45T99:99:99" through to Postgres, which fails the whole page.
  .refine((s) => isRealUtcInstant(s.split("_")[0] ?? ""), "invalid page cursor: not a real time")
  .transform((s) => {
    const [at = "", id = "0"] = s.split("_");
    return { at, id: Number(id) };
  });

export const AuditFilters = z.object({
  endpoint: z.string().trim().min(1).max(64).optional(),
  actor: z.string().trim().min(1).max(200).optional(),
  action: z.string().trim().regex(/^[a-z_]+(\.[a-z_]+)?$/, "unknown kind").optional(),
  from: isoInstant.optional(),
  to: isoInstant.optional(),
  cursor: AuditCursor.optional(),
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
      cursorAt: sql<string>`to_char(${auditEvents.at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(auditEvents)
    .where(where.length > 0 ? and(...where) : undefined)
    // NULLS LAST to match the index drizzle created (a bare DESC means NULLS FIRST and sorts instead).
    .orderBy(sql`${auditEvents.at} desc nulls last`, sql`${auditEvents.id} desc nulls last`)
    .limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  const events = page.map(({ cursorAt: _cursorAt, ...event }) => event);
  return { events, nextCursor: rows.length > f.limit && last ? `${last.cursorAt}_${last.id}` : null };
}

/** The distinct actors and kinds present, for the filter drop-downs. */
export async function listAuditFacets(db: Db): Promise<{ actors: string[]; actions: string[] }> {
  const actors = await db.selectDistinct({ v: auditEvents.actor }).from(auditEvents).orderBy(auditEvents.actor).limit(500);
  const actions = await db.selectDistinct({ v: auditEvents.action }).from(auditEvents).orderBy(auditEvents.action).limit(200);
  return { actors: actors.map((r) => r.v), actions: actions.map((r) => r.v) };
}
