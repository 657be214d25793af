import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { LimitKind } from "@/lib/vocabulary";

const owner = (kind: LimitKind) => (kind === "ceiling" ? sql`ceilings` : sql`budgets`);

/** A test's setup: an override written straight into the table (no audit, no change control). */
export async function insertOverride(db: Db, kind: LimitKind, id: number, o: { caller: string; value: number; reason?: string }): Promise<void> {
  const rows = resultRows<{ limit_id: number }>(
    await db.execute(sql`
      insert into limit_overrides (limit_id, caller, value, reason)
      select l.limit_id, ${o.caller}, ${o.value}, ${o.reason ?? "test"} from ${owner(kind)} l where l.id = ${id}
      returning limit_id`),
  );
  if (rows.length !== 1) throw new Error(`no ${kind} #${id} to override`);
}

/** A test's cleanup: every override of one ceiling or budget gone, or only the one account's. */
export async function deleteOverrides(db: Db, kind: LimitKind, id: number, caller?: string): Promise<void> {
  await db.execute(sql`
    delete from limit_overrides o using ${owner(kind)} l
    where l.id = ${id} and o.limit_id = l.limit_id and (${caller ?? null}::text is null or o.caller = ${caller ?? null}::text)`);
}
