import { eq, sql } from "drizzle-orm";
import { resultRows } from "@/db/client";
import { describe, expect, it } from "vitest";
import { budgets } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { AuditActor } from "@/lib/audit/record";
import { getEndpointDetail, killEndpoint, listEndpointsOverview } from "@/lib/ceilings";
import { makeBudget, priceEndpoint } from "@/lib/enforcement/budget-fixtures";
import { reserve, settleReservation } from "@/lib/enforcement";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { killBudget, restoreBudget } from "./kill";
import { budgetStopsQuery, readBudgetStops } from "./read-stops";

// What the overview and the endpoint page say about an endpoint a budget stops: killed, or a global
// budget used up, names it (not LIVE); a per-account budget used up by one account does not.

const actor: AuditActor = { type: "staff", email: "ops@example.com" };

function nextUtcMidnight(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
}

describe.skipIf(skipWithoutDatabase())("endpoints stopped by a budget", () => {
  const t = useTestDatabase("budget_stops", { max: 4 });

  async function member(priced = true) {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    // One micro a unit.
    if (priced) await priceEndpoint(t.db, e.endpointId, { units: 1_000_000 });
    return e;
  }
  const overviewOf = async (id: number) => (await listEndpointsOverview(t.db)).find((e) => e.id === id);
  const grant = async (endpoint: string, amount: number, caller?: string) => {
    const d = await reserve(t.db, { endpoint, amount, ...(caller ? { caller } : {}) });
    if (d.status !== "granted") throw new Error(`expected a grant, got ${JSON.stringify(d)}`);
    return d.reservationId;
  };

  it("a killed budget stops every member, priced or not, until it is restored", async () => {
    const [a, free] = [await member(), await member(false)];
    const budget = await makeBudget(t.db, { endpointIds: [a.endpointId, free.endpointId], value: 100 });
    expect((await overviewOf(a.endpointId))?.state).toBe("live");

    await killBudget(t.db, { key: budget.key, actor, reason: "spike" });
    for (const e of [a, free]) {
      const o = await overviewOf(e.endpointId);
      expect(o?.state).toBe("stopped");
      expect(o?.budgetStops).toMatchObject([{ budget: budget.key, reason: "killed", killedBy: "ops@example.com" }]);
      // Its own ceilings keep their room: only the budget stops it.
      expect(o?.ceilings[0]?.state).toBe("live");
    }
    const detail = await getEndpointDetail(t.db, a.key);
    expect(detail?.state).toBe("stopped");
    expect(detail?.budgetStops.map((s) => s.reason)).toEqual(["killed"]);

    await restoreBudget(t.db, { key: budget.key, actor });
    expect((await overviewOf(a.endpointId))?.state).toBe("live");
    expect((await overviewOf(a.endpointId))?.budgetStops).toEqual([]);
  });

  it("a global budget used up stops its priced members until the window ends; held money may come back", async () => {
    const [a, b, free] = [await member(), await member(), await member(false)];
    const budget = await makeBudget(t.db, { endpointIds: [a.endpointId, b.endpointId, free.endpointId], value: 100 });
    const held = await grant(a.key, 100);
    const now = new Date();
    let stops = await readBudgetStops(t.db, { endpointIds: [a.endpointId, b.endpointId], now });
    expect(stops.get(b.endpointId)).toMatchObject([{ budget: budget.key, reason: "exhausted", held: 100, settled: 0, heldMayFree: true }]);
    expect(stops.get(b.endpointId)?.[0]?.until.toISOString()).toBe(nextUtcMidnight(now));

    await settleReservation(t.db, { reservationId: held, actual: 100 });
    stops = await readBudgetStops(t.db, { endpointIds: [a.endpointId], now });
    expect(stops.get(a.endpointId)).toMatchObject([{ reason: "exhausted", settled: 100, held: 0, heldMayFree: false }]);
    expect((await overviewOf(b.endpointId))?.state).toBe("stopped");
    // A member with no price costs nothing: the used-up budget does not refuse it.
    expect((await overviewOf(free.endpointId))?.state).toBe("live");

    // Room again (a raise): live again.
    await t.db.update(budgets).set({ value: 150, maxValue: 1000 }).where(eq(budgets.id, budget.id));
    expect((await overviewOf(b.endpointId))?.state).toBe("live");
  });

  it("a per-account budget used up by one account does not claim the endpoint is stopped; archived budgets stop nothing", async () => {
    const a = await member();
    const perAccount = await makeBudget(t.db, { endpointIds: [a.endpointId], value: 50, scope: "account" });
    const r = await grant(a.key, 50, "acct_full");
    await settleReservation(t.db, { reservationId: r, actual: 50, caller: "acct_full" });
    expect((await reserve(t.db, { endpoint: a.key, amount: 1, caller: "acct_full" })).status).toBe("refused");
    expect((await reserve(t.db, { endpoint: a.key, amount: 1, caller: "acct_other" })).status).toBe("granted");
    expect((await overviewOf(a.endpointId))?.state).toBe("live");
    // Killed, it refuses every account: that stops the endpoint.
    await killBudget(t.db, { key: perAccount.key, actor });
    expect((await overviewOf(a.endpointId))?.budgetStops).toMatchObject([{ budget: perAccount.key, reason: "killed" }]);
    await restoreBudget(t.db, { key: perAccount.key, actor });

    const c = await member();
    const archived = await makeBudget(t.db, { endpointIds: [c.endpointId], value: 10 });
    await killBudget(t.db, { key: archived.key, actor });
    expect((await overviewOf(c.endpointId))?.state).toBe("stopped");
    await t.db.update(budgets).set({ archivedAt: new Date(), archivedBy: "test" }).where(eq(budgets.id, archived.id));
    expect((await overviewOf(c.endpointId))?.state).toBe("live");
  });

  it("the endpoint's own kill comes first; the budget still shows beside it", async () => {
    const a = await member();
    const budget = await makeBudget(t.db, { endpointIds: [a.endpointId], value: 100 });
    await killBudget(t.db, { key: budget.key, actor });
    await killEndpoint(t.db, { endpointKey: a.key, actor });
    const o = await overviewOf(a.endpointId);
    expect(o?.state).toBe("killed");
    expect(o?.budgetStops.map((s) => s.budget)).toEqual([budget.key]);
  });

  it("reads through indexes only: memberships by endpoint, budgets by id, each counter by its key; no reservation", async () => {
    const a = await member();
    await makeBudget(t.db, { endpointIds: [a.endpointId], value: 100 });
    // Every access an index can serve is served by one when sequential scans are off.
    const plan = await t.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const q = budgetStopsQuery({ endpointIds: [a.endpointId], now: new Date() });
      return resultRows<{ "QUERY PLAN": string }>(await tx.execute(sql`explain ${q}`))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    });
    expect(plan).not.toMatch(/Seq Scan on (budget_members|counters|budgets)/);
    expect(plan).toMatch(/budget_members_endpoint_idx|budget_members_pkey/);
    // The counter of the open window by its whole key: not a filter over the budget's history.
    // (window_bounds is inlined, so the window's start shows as its expression.)
    expect(plan).toMatch(/Index (Only )?Scan using counters_\w+ on counters c[^\n]*\n\s+Index Cond: \(\(limit_id = b\.limit_id\) AND [^\n]*window_start = /);
    expect(plan).not.toContain("reservations");
  });
});
