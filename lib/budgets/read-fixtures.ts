import { inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, endpoints, reservations, type NewBudget } from "@/db/schema";

// Rows for the read tests (and the enforcement tests' budgets), inserted directly: the reads must
// show whatever the tables hold, and these tests should not depend on the write verbs.

let counter = 0;

export async function insertEndpoint(db: Db, key?: string): Promise<{ id: number; key: string }> {
  counter += 1;
  const k = key ?? `llm.t${counter}-${Date.now().toString(36)}`;
  const [row] = await db
    .insert(endpoints)
    .values({ key: k, name: `Test ${k}`, unit: "tokens", perCallMax: 10_000 })
    .returning({ id: endpoints.id, key: endpoints.key });
  if (!row) throw new Error("endpoint not inserted");
  return row;
}

export async function insertBudget(db: Db, p: Partial<NewBudget> & { members: number[] }): Promise<{ id: number; key: string; limitId: number }> {
  counter += 1;
  const { members, ...fields } = p;
  const [row] = await db
    .insert(budgets)
    .values({
      key: `budget.t${counter}-${Date.now().toString(36)}`,
      name: `Budget ${counter}`,
      scope: "global",
      window: "utc_day",
      value: 100_000_000,
      minValue: 0,
      maxValue: 10_000_000_000,
      defaultValue: 100_000_000,
      ...fields,
    })
    .returning({ id: budgets.id, key: budgets.key, limitId: budgets.limitId });
  if (!row) throw new Error("budget not inserted");
  if (members.length > 0) await db.insert(budgetMembers).values(members.map((endpointId) => ({ budgetId: row.id, endpointId })));
  return row;
}

type ReservationState = "held" | "settled" | "released" | "expired";

export async function insertReservation(
  db: Db,
  p: { endpointId: number; createdAt: Date; state: ReservationState; money: number; settledMoney?: number; caller?: string; budgets?: number[] },
): Promise<void> {
  // The budgets it charged, as reserve_batch names them: by their limits (the window is the budget's;
  // only the limit is read here).
  const ids = p.budgets ?? [];
  const limitOf = new Map(
    ids.length === 0
      ? []
      : (await db.select({ id: budgets.id, limitId: budgets.limitId }).from(budgets).where(inArray(budgets.id, ids))).map((b) => [b.id, b.limitId]),
  );
  const charges = ids.map((b) => ({
    limitId: limitOf.get(b) ?? 0,
    scopeKey: p.caller ?? "",
    windowStart: p.createdAt,
    measure: "m" as const,
    amount: p.money,
  }));
  await db.insert(reservations).values({
    endpointId: p.endpointId,
    caller: p.caller ?? "",
    amount: 1,
    money: p.money,
    settledMoney: p.settledMoney ?? null,
    state: p.state,
    charges,
    createdAt: p.createdAt,
    expiresAt: new Date(p.createdAt.getTime() + 60_000),
  });
}
