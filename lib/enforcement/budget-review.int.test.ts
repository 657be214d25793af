import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { budgetUsage, makeBudget, priceEndpoint, setBudgetValue } from "./budget-fixtures";
import { batcherFor, reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { readBudgetOverview } from "@/lib/budgets";
import { makeEndpoint, PATIENT } from "./test-fixtures";
import { insertOverride, deleteOverrides } from "@/lib/limits/test-fixtures";

// Review of budgets and parts: inputs at the edges of the money arithmetic (prices up to 10^15
// picos, units up to 2^53) must be clear input errors for the request alone, never an exception
// that fails a batch, and never money past what can be counted.

const MAX_PRICE = 1_000_000_000_000_000; // $1000 a unit, the highest price the catalog takes

describe.skipIf(skipWithoutDatabase())("budgets and parts at the edges", () => {
  const t = useTestDatabase("budget_review", { max: 4 });

  beforeAll(() => {
    batcherFor(t.db, PATIENT);
  });

  async function dear(prices: Record<string, number>) {
    const e = await makeEndpoint(t.db, {
      perCallMax: 1_000_000_000_000,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000_000 }],
    });
    await priceEndpoint(t.db, e.endpointId, prices);
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000_000_000_000 });
    return { e, budget };
  }

  it("answers a parts reservation whose money overflows as invalid_amount for itself, and grants its neighbour in the same batch", async () => {
    const { e, budget } = await dear({ input: MAX_PRICE, output: 1 });
    // 10^10 input units at 10^15 picos: 10^19 micros, past what a bigint holds.
    const batch = [
      { endpoint: e.key, parts: { input: 1, output: 0 } },
      { endpoint: e.key, parts: { input: 10_000_000_000, output: 0 } },
    ];
    const [row] = resultRows<{ a: { status: string; code?: string }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(batch)}::jsonb) as a`),
    );
    expect(row?.a[0]).toMatchObject({ status: "granted" });
    expect(row?.a[1]).toMatchObject({ status: "error", code: "invalid_amount" });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 1_000_000_000, settled: 0 });
  });

  it("refuses a settle whose money is past what can be counted as invalid_actual, and changes nothing", async () => {
    const { e, budget } = await dear({ units: MAX_PRICE });
    const d = await reserve(t.db, { endpoint: e.key, amount: 1 });
    if (d.status !== "granted") throw new Error("expected a grant");
    // Within the per-call max, but 10^10 units at $1000 is 10^19 micros (a bigint overflows), and
    // 10^7 units is 10^16 micros (past 2^53, which the reservation itself refuses as invalid_amount).
    for (const actual of [10_000_000_000, 10_000_000]) {
      await expect(settleReservation(t.db, { reservationId: d.reservationId, actual })).rejects.toMatchObject({ code: "invalid_actual" });
    }
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 1_000_000_000, settled: 0 });
    const [res] = resultRows<{ state: string }>(await t.db.execute(sql`select state::text as state from reservations where id = ${d.reservationId}`));
    expect(res?.state).toBe("held");
  });

  it("refuses a settle by parts whose money overflows as invalid_actual in a resolve batch, and settles its neighbour", async () => {
    const { e, budget } = await dear({ input: MAX_PRICE, output: 1 });
    const a = await reserve(t.db, { endpoint: e.key, parts: { input: 1, output: 0 } });
    const b = await reserve(t.db, { endpoint: e.key, parts: { input: 1, output: 0 } });
    if (a.status !== "granted" || b.status !== "granted") throw new Error("expected grants");
    const items = [
      { id: a.reservationId, verb: "settle", parts: { input: 1, output: 0 } },
      { id: b.reservationId, verb: "settle", parts: { input: 10_000_000_000, output: 0 } },
    ];
    const [row] = resultRows<{ a: { status: string; code?: string }[] }>(
      await t.db.execute(sql`select ceilings.resolve_batch(${JSON.stringify(items)}::jsonb) as a`),
    );
    expect(row?.a[0]).toMatchObject({ status: "settled" });
    expect(row?.a[1]).toMatchObject({ status: "error", code: "invalid_actual" });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 1_000_000_000, settled: 1_000_000_000 });
  });

  it("gives each member the money it charged this budget: not reservations from before it joined, and an overrun after release", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 }] });
    await priceEndpoint(t.db, e.endpointId, { units: 1_000_000 }); // a micro a unit
    // Before the budget exists: this charges no budget.
    const before = await reserve(t.db, { endpoint: e.key, amount: 100 });
    if (before.status !== "granted") throw new Error("expected a grant");
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000 });
    const held = await reserve(t.db, { endpoint: e.key, amount: 30 });
    const released = await reserve(t.db, { endpoint: e.key, amount: 10 });
    if (held.status !== "granted" || released.status !== "granted") throw new Error("expected grants");
    await releaseReservation(t.db, { reservationId: released.reservationId });
    // Reported after the release: charged to the budget after all (20 micros).
    await settleReservation(t.db, { reservationId: released.reservationId, actual: 20 });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 30, settled: 20 });
    const view = await readBudgetOverview(t.db, { key: budget.key });
    expect(view?.spend).toBe(50);
    // The members' shares add up to the budget's spend.
    expect(view?.members.map((m) => [m.key, m.money])).toEqual([[e.key, 50]]);
  });

  // log_refusals folds refusals within a 10-second bucket; two budgets refusing the same caller on
  // the same endpoint are both gate 'budget', and folded on (endpoint, gate, caller, destination)
  // alone they became one row naming the last budget. The budget is part of the fold's key.
  it("logs a refusal on the page of the budget that refused, when two budgets refuse one caller within seconds", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    await priceEndpoint(t.db, e.endpointId, { units: 1_000_000 });
    const perAccount = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000, scope: "account" });
    const global = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000 });
    await insertOverride(t.db, "budget", perAccount.id, { caller: "acct_x", value: 0, reason: "test" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_x" })).toMatchObject({ status: "refused", gate: "budget", budget: perAccount.key });
    await deleteOverrides(t.db, "budget", perAccount.id);
    await setBudgetValue(t.db, global.id, 0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_x" })).toMatchObject({ status: "refused", gate: "budget", budget: global.key });
    const [mine] = resultRows<{ n: number }>(
      await t.db.execute(sql`select count(*)::int as n from refusals where gate = 'budget' and budget_id = ${perAccount.id}`),
    );
    expect(mine?.n).toBe(1);
  });
});
