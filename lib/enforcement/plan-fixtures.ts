import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

// Plans and accounts for enforcement tests, written straight to their tables: these tests are about
// what reserve_batch does with them, not about the dashboard's rules for making them (lib/plans).

let counter = 0;

/** A new plan with a unique key. */
export async function makePlan(db: Db, name = "plan"): Promise<{ id: number; key: string }> {
  counter += 1;
  const key = `${name}-${counter}-${Date.now().toString(36)}`;
  const [row] = resultRows<{ id: number }>(await db.execute(sql`insert into plans (key, name) values (${key}, ${key}) returning id`));
  if (!row) throw new Error("no plan inserted");
  return { id: row.id, key };
}

/** A plan's value on a per-caller ceiling, the way an edit does: waiting for batches on its endpoint. Returns the database's clock once committed. */
export async function setPlanCeilingValue(db: Db, planId: number, ceilingId: number, value: number): Promise<Date> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select ceilings.lock_endpoints_for_change(array(select endpoint_id from ceilings where id = ${ceilingId}))`);
    await tx.execute(sql`insert into plan_limit_values (plan_id, limit_id, value) select ${planId}, limit_id, ${value} from ceilings where id = ${ceilingId}
                         on conflict (plan_id, limit_id) do update set value = excluded.value`);
  });
  return committedAt(db);
}

/** A plan's value on a per-account budget, waiting for batches on every member. */
export async function setPlanBudgetValue(db: Db, planId: number, budgetId: number, value: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select ceilings.lock_endpoints_for_change(array(select endpoint_id from budget_members where budget_id = ${budgetId}))`);
    await tx.execute(sql`insert into plan_limit_values (plan_id, limit_id, value) select ${planId}, limit_id, ${value} from budgets where id = ${budgetId}
                         on conflict (plan_id, limit_id) do update set value = excluded.value`);
  });
}

/** Puts an account on a plan (null: back on the default); returns the database's clock once committed. */
export async function assignAccount(db: Db, account: string, planId: number | null): Promise<Date> {
  await db.execute(sql`insert into accounts (account, plan_id, plan_set_at, plan_set_by) values (${account}, ${planId}, now(), 'test')
                       on conflict (account) do update set plan_id = excluded.plan_id, plan_set_at = now()`);
  return committedAt(db);
}

/** Blocks (or unblocks) an account; returns the database's clock once committed. */
export async function setBlocked(db: Db, account: string, blocked: boolean): Promise<Date> {
  await db.execute(sql`insert into accounts (account, blocked_at, blocked_by) values (${account}, ${blocked ? sql`now()` : null}, 'test')
                       on conflict (account) do update set blocked_at = excluded.blocked_at`);
  return committedAt(db);
}

/** Makes `planId` the default plan (and no other), as the dashboard's switch does, in one transaction. */
export async function makeDefault(db: Db, planId: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`update plans set is_default = false where is_default and id <> ${planId}`);
    await tx.execute(sql`update plans set is_default = true where id = ${planId}`);
  });
}

export async function defaultPlanId(db: Db): Promise<number> {
  const [row] = resultRows<{ id: number }>(await db.execute(sql`select id from plans where is_default`));
  if (!row) throw new Error("no default plan");
  return row.id;
}

async function committedAt(db: Db): Promise<Date> {
  const [row] = resultRows<{ at: Date | string }>(await db.execute(sql`select clock_timestamp() as at`));
  return new Date(row?.at ?? 0);
}
