import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { endpoints, reservations, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { insertEndpoint } from "@/lib/budgets/read-fixtures";
import type { ProviderDay, ReportedRow } from "./types";

// Rows for the comparison, readiness and worker tests, written straight to their tables: what a
// pull would have written (H1's writeUsageDays does it for real), and reservations in each state.

let counter = 0;

/** An endpoint of `unit` priced at `pricePico` a unit (10,000,000,000: one cent). */
export async function pricedEndpoint(db: Db, pricePico = 10_000_000_000): Promise<{ id: number; key: string }> {
  const e = await insertEndpoint(db);
  await db
    .update(endpoints)
    .set({ parts: [{ name: "units", pricePico }] })
    .where(eq(endpoints.id, e.id));
  return e;
}

export async function makeSource(db: Db, over: Partial<typeof usageSources.$inferInsert> = {}): Promise<number> {
  counter += 1;
  const [row] = await db
    .insert(usageSources)
    .values({ name: `source ${counter} ${Date.now().toString(36)}`, kind: "file", createdBy: "test", ...over })
    .returning({ id: usageSources.id });
  if (!row) throw new Error("source not inserted");
  return row.id;
}

export async function addRule(db: Db, sourceId: number, match: string, target: { endpointId: number } | { budgetId: number }): Promise<void> {
  await db.insert(usageSourceRules).values({ sourceId, match, createdBy: "test", ...target });
}

/**
 * Replaces the source's days with these rows, mapped by exact match on `item` → target: a stand-in
 * for the pull's write, enough for the comparison (which reads only what was written).
 */
export async function writeDays(
  db: Db,
  sourceId: number,
  days: ProviderDay[],
  rows: (Pick<ReportedRow, "day" | "item" | "units" | "costMicros"> & { endpointId?: number; budgetId?: number })[],
  opts: { pulledAt?: Date } = {},
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(usageRows).where(and(eq(usageRows.sourceId, sourceId), inArray(usageRows.day, days)));
    await tx.delete(usagePulls).where(and(eq(usagePulls.sourceId, sourceId), inArray(usagePulls.day, days)));
    for (const day of days) {
      const ofDay = rows.filter((r) => r.day === day);
      await tx.insert(usagePulls).values({
        sourceId,
        day,
        via: "test",
        ...(opts.pulledAt ? { pulledAt: opts.pulledAt } : {}),
        rows: ofDay.length,
        unmappedRows: ofDay.filter((r) => !r.endpointId && !r.budgetId).length,
      });
    }
    if (rows.length > 0) {
      await tx.insert(usageRows).values(
        rows.map((r) => ({
          sourceId,
          day: r.day,
          item: r.item,
          units: r.units,
          costMicros: r.costMicros,
          endpointId: r.endpointId ?? null,
          budgetId: r.budgetId ?? null,
          raw: { item: r.item },
        })),
      );
    }
  });
}

type State = "held" | "settled" | "released" | "expired";

/** One reservation: `amount`/`money` reserved; settled at `settled` units and `settledMoney` micros. */
export async function reservation(
  db: Db,
  p: { endpointId: number; at: Date; state: State; amount: number; money: number; settled?: number; settledMoney?: number },
): Promise<string> {
  const [row] = await db
    .insert(reservations)
    .values({
      endpointId: p.endpointId,
      amount: p.amount,
      money: p.money,
      state: p.state,
      settledAmount: p.state === "settled" ? (p.settled ?? p.amount) : null,
      settledMoney: p.state === "settled" ? (p.settledMoney ?? p.money) : null,
      overrun: p.state === "settled" && (p.settled ?? p.amount) > p.amount,
      charges: [],
      createdAt: p.at,
      expiresAt: new Date(p.at.getTime() + 60_000),
      resolvedAt: p.state === "held" ? null : p.at,
    })
    .returning({ id: reservations.id });
  if (!row) throw new Error("reservation not inserted");
  return row.id;
}

export async function resolveReservation(db: Db, id: string, state: "settled" | "expired"): Promise<void> {
  await db.execute(sql`update reservations set state = ${state}, settled_amount = case when ${state} = 'settled' then amount end,
    settled_money = case when ${state} = 'settled' then money end, resolved_at = now() where id = ${id}`);
}
