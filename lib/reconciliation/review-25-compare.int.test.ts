// REVIEW EVIDENCE (issue 25 adversarial review): each test below FAILS on aa965fd and names a bug.
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { reservations } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { insertBudget } from "@/lib/budgets/read-fixtures";
import { chargedBetween } from "./charged";
import { compareSourceDays, recompareRecent } from "./compare";
import { alerts } from "@/db/schema";
import { resolveReservation } from "./compare-fixtures";
import { addRule, makeSource, pricedEndpoint, reservation, writeDays } from "./compare-fixtures";
import { addUsageRule, createUsageSource, sourceVersion, updateUsageSource } from "./sources";

const admin = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("REVIEW comparison", () => {
  const t = useTestDatabase("usage_review_cmp", { max: 6 });

  it("charged counts an overrun reported after release or expiry (settle.sql charges `actual` to the ledger)", async () => {
    const e = await pricedEndpoint(t.db); // one cent a unit
    const at = new Date("2026-11-02T12:00:00Z");
    // What settle.sql leaves after a settle of 150 on a reservation of 100 that was already released / expired:
    // state unchanged, overrun = true, settled_amount/settled_money = the actual (the ledger charged it).
    for (const state of ["released", "expired"] as const) {
      await t.db.insert(reservations).values({
        endpointId: e.id, amount: 100, money: 1_000_000, state, overrun: true, settledAmount: 150, settledMoney: 1_500_000,
        charges: [], createdAt: at, expiresAt: new Date(at.getTime() + 60_000), resolvedAt: at,
      });
    }
    const c = (await chargedBetween(t.db, [e.id], new Date("2026-11-02T00:00:00Z"), new Date("2026-11-03T00:00:00Z"))).get(e.id);
    // released + overrun: the ledger charged 150; expired + overrun: 100 + (150 - 100) = 150.
    expect(c).toEqual({ units: 300, micros: 3_000_000, held: 0 });
  });

  it("a budget whose member endpoint is mapped by its own rule is billed that endpoint's rows too (charged counts every member)", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    const budget = await insertBudget(t.db, { members: [a.id, b.id] });
    const sourceId = await makeSource(t.db);
    // Allowed by addUsageRule: the model of endpoint a to a, everything else of the provider to the budget.
    await addRule(t.db, sourceId, "gpt-4o*", { endpointId: a.id });
    await addRule(t.db, sourceId, "*", { budgetId: budget.id });
    const day = "2026-11-09";
    await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 100, money: 5_000_000 });
    await reservation(t.db, { endpointId: b.id, at: new Date("2026-11-09T11:00:00Z"), state: "settled", amount: 100, money: 5_000_000 });
    await writeDays(t.db, sourceId, [day], [
      { day, item: "gpt-4o", units: 100, costMicros: 5_000_000, endpointId: a.id },
      { day, item: "embeddings", units: 100, costMicros: 5_000_000, budgetId: budget.id },
    ]);
    const rows = await compareSourceDays(t.db, { sourceId, days: [day], now: new Date("2026-11-12T12:00:00Z") });
    const budgetRow = rows.find((r) => r.budgetId === budget.id);
    // Ledger and bill agree exactly ($10 both); the budget row says billed $5 vs charged $10 (-50 %) and alerts.
    expect(budgetRow).toMatchObject({ billedMicros: 10_000_000, chargedMicros: 10_000_000 });
  });

  it("a source's currency cannot be changed away from the currency of the endpoints its rules map (as adding a rule refuses)", async () => {
    const e = await pricedEndpoint(t.db); // USD
    const input = { name: `usd ${Date.now()}`, kind: "file", location: "", credentialRef: "", account: "", timeZone: "UTC", currency: "USD", lookbackDays: "3", thresholdPercent: "2", thresholdMoney: "1" };
    const s = await createUsageSource(t.db, { input, actor: admin });
    await addUsageRule(t.db, { sourceId: s.id, match: "x", endpointKey: e.key, actor: admin });
    // EUR bills would then be compared with USD charges, micros for micros.
    await expect(updateUsageSource(t.db, { sourceId: s.id, expectedVersion: sourceVersion(s), input: { ...input, currency: "EUR" }, actor: admin })).rejects.toThrow(/currency|USD/);
  });

  it("a rule added after a pull does not make the next comparison call the day 'billed nothing' (false reconciliation alert)", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { lookbackDays: 3 });
    await addRule(t.db, sourceId, "item-a", { endpointId: a.id });
    const day = "2026-11-09";
    const now = new Date("2026-11-10T12:00:00Z");
    const held = await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-09T10:00:00Z"), state: "held", amount: 100, money: 1_000_000 });
    await reservation(t.db, { endpointId: b.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 500, money: 5_000_000 });
    // The provider billed b exactly what Ceilings charged it; no rule mapped item-b at pull time.
    await writeDays(t.db, sourceId, [day], [
      { day, item: "item-a", units: 100, costMicros: null, endpointId: a.id },
      { day, item: "item-b", units: 500, costMicros: null },
    ]);
    await compareSourceDays(t.db, { sourceId, days: [day], now });
    // Staff map item-b (the page says: "rows already pulled keep their mapping until their day is pulled again").
    await addRule(t.db, sourceId, "item-b", { endpointId: b.id });
    await resolveReservation(t.db, held, "settled");
    await recompareRecent(t.db, now);
    const fired = await t.db.select().from(alerts).where(eq(alerts.dedupeKey, `reconciliation:endpoint:${b.id}:${day}`));
    expect(fired.map((f) => f.message)).toEqual([]);
  });
});
