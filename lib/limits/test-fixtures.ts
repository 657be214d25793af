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

/** A test's setup: a plan's value on a ceiling or budget written straight into the table. */
export async function insertPlanValue(db: Db, kind: LimitKind, id: number, v: { planId: number; value: number }): Promise<void> {
  const rows = resultRows<{ limit_id: number }>(
    await db.execute(sql`
      insert into plan_limit_values (plan_id, limit_id, value)
      select ${v.planId}, l.limit_id, ${v.value} from ${owner(kind)} l where l.id = ${id}
      returning limit_id`),
  );
  if (rows.length !== 1) throw new Error(`no ${kind} #${id} for a plan value`);
}

/** The plans' values on one ceiling or budget, by plan id. */
export async function planValuesOn(db: Db, kind: LimitKind, id: number): Promise<{ planId: number; value: number }[]> {
  return resultRows<{ planId: number; value: string | number }>(
    await db.execute(sql`
      select v.plan_id as "planId", v.value from plan_limit_values v join ${owner(kind)} l on l.limit_id = v.limit_id
      where l.id = ${id} order by v.plan_id`),
  ).map((r) => ({ planId: r.planId, value: Number(r.value) }));
}
