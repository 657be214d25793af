import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts, ceilings, endpoints, providerCaps, refusalHourly, usageSourceRules } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { compareSourceDays } from "./compare";
import { addRule, makeSource, pricedEndpoint, reservation, writeDays } from "./compare-fixtures";
import { rollUpLedgerDays } from "./ledger-days";
import { readinessOf } from "./readiness";

const NOW = new Date("2026-11-14T12:00:00Z");
const CENT = 10_000;
const HOUR = 3_600_000;

describe.skipIf(skipWithoutDatabase())("readiness of every endpoint", () => {
  const t = useTestDatabase("recon_readiness");

  async function dailyCeiling(endpointId: number, value: number) {
    await t.db
      .insert(ceilings)
      .values({ endpointId, metric: "units", scope: "global", window: "utc_day", value, minValue: 0, maxValue: value, defaultValue: value });
  }

  async function compared(endpointId: number, day: string, billed: number, charged: number) {
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, `item-${endpointId}`, { endpointId });
    if (charged > 0) await reservation(t.db, { endpointId, at: new Date(`${day}T12:00:00Z`), state: "settled", amount: charged, money: charged * CENT });
    await writeDays(t.db, sourceId, [day], [{ day, item: `item-${endpointId}`, units: billed, costMicros: null, endpointId }]);
    await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
  }

  async function unavailable(key: string, count: number, at: Date) {
    await t.db
      .insert(refusalHourly)
      .values({ hour: new Date(Math.floor(at.getTime() / HOUR) * HOUR), endpointId: null, endpointKey: key, gate: "unavailable", count });
  }

  it("answers each question green, amber or red from its own numbers, in one batch", async () => {
    // Green everywhere it can be.
    const green = await pricedEndpoint(t.db);
    await dailyCeiling(green.id, 1000);
    await compared(green.id, "2026-11-12", 1000, 995);
    await t.db
      .insert(providerCaps)
      .values({ endpointId: green.id, measure: "money", window: "month", amount: 500_000_000, setAt: "provider", recordedBy: "t" });
    // Out of the week: neither counts.
    await unavailable(green.key, 1000, new Date(NOW.getTime() - 8 * 24 * HOUR));
    await compared(green.id, "2026-11-01", 1000, 0);

    // Red: billed 10 % more, half the reservations expired, 100 unavailable refusals, no cap.
    const red = await pricedEndpoint(t.db);
    await dailyCeiling(red.id, 1000);
    await compared(red.id, "2026-11-12", 1000, 900);
    await reservation(t.db, { endpointId: red.id, at: new Date("2026-11-13T09:00:00Z"), state: "expired", amount: 5, money: 5 * CENT });
    await unavailable(red.key, 60, new Date(NOW.getTime() - 2 * HOUR));
    await unavailable(red.key, 40, new Date(NOW.getTime() - 6 * 24 * HOUR));

    // Amber: not mapped by any source, 4 of 100 expired, 5 unavailable refusals, a cap below the worst case.
    const amber = await pricedEndpoint(t.db);
    await dailyCeiling(amber.id, 1000);
    for (let i = 0; i < 100; i++) {
      await reservation(t.db, {
        endpointId: amber.id,
        at: new Date(NOW.getTime() - (i + 1) * HOUR),
        state: i < 4 ? "expired" : i < 50 ? "settled" : "released",
        amount: 1,
        money: CENT,
      });
    }
    await unavailable(amber.key, 5, new Date(NOW.getTime() - HOUR));
    await t.db.insert(providerCaps).values({ endpointId: amber.id, measure: "units", window: "day", amount: 999, setAt: "provider", recordedBy: "t" });

    // No global ceiling: a recorded cap has nothing to compare with.
    const unbounded = await pricedEndpoint(t.db);
    await t.db
      .insert(providerCaps)
      .values({ endpointId: unbounded.id, measure: "money", window: "day", amount: 1_000_000, setAt: "provider", recordedBy: "t" });

    // Archived endpoints are left out unless asked for.
    const archived = await pricedEndpoint(t.db);
    await t.db.update(endpoints).set({ archivedAt: NOW }).where(eq(endpoints.id, archived.id));

    // Settle discipline reads the worker's rollup of the ledger, not the reservations.
    await rollUpLedgerDays(t.db, NOW);
    const all = await readinessOf(t.db, { now: NOW });
    expect(all.has(archived.id)).toBe(false);
    expect([...all.keys()]).toEqual(expect.arrayContaining([green.id, red.id, amber.id, unbounded.id]));

    const g = all.get(green.id);
    expect(g?.reserved).toMatchObject({ color: "green", figure: "99.5 %" });
    expect(g?.settled).toMatchObject({ color: "green", figure: "0 expired of 1" });
    expect(g?.failClosed).toMatchObject({ color: "green", figure: "0 unavailable refusals in 7 days" });
    expect(g?.secondCap).toMatchObject({ color: "green", figure: "$500.00 a month" });
    expect(g?.secondCap.detail).toContain("$310.00 a month");

    const r = all.get(red.id);
    expect(r?.reserved).toMatchObject({ color: "red", figure: "90.0 %" });
    expect(r?.settled).toMatchObject({ color: "red", figure: "1 expired of 2" });
    expect(r?.failClosed).toMatchObject({ color: "red", figure: "100 unavailable refusals in 7 days" });
    expect(r?.secondCap).toMatchObject({ color: "red", figure: "none recorded" });
    expect(r?.overall).toBe("red");

    const a = all.get(amber.id);
    expect(a?.reserved).toMatchObject({ color: "amber", figure: "not reconciled" });
    expect(a?.reserved.detail).toMatch(/^No usage source maps this endpoint/);
    expect(a?.settled).toMatchObject({ color: "amber", figure: "4 expired of 100" });
    expect(a?.failClosed).toMatchObject({ color: "amber", figure: "5 unavailable refusals in 7 days" });
    expect(a?.secondCap).toMatchObject({ color: "amber", figure: "999 tokens a day" });

    const u = all.get(unbounded.id);
    expect(u?.secondCap).toMatchObject({ color: "amber", figure: "$1.00 a day" });
    expect(u?.settled).toMatchObject({ color: "amber", figure: "no reservations" });

    // No destination at all: alerts reach nobody.
    expect(g?.told.color).toBe("red");
    expect(g?.overall).toBe("red");

    const only = await readinessOf(t.db, { endpointIds: [archived.id], now: NOW });
    expect([...only.keys()]).toEqual([archived.id]);
    expect((await readinessOf(t.db, { endpointIds: [], now: NOW })).size).toBe(0);
  });

  it("reads a fixed number of statements whatever the number of endpoints", async () => {
    const count = async (endpointIds: number[]) => {
      let statements = 0;
      const counting = new Proxy(t.db, {
        get: (target, prop, receiver) => {
          if (prop === "select" || prop === "selectDistinct" || prop === "execute") statements += 1;
          return Reflect.get(target, prop, receiver);
        },
      });
      await readinessOf(counting, { endpointIds, now: NOW });
      return statements;
    };
    const one = await pricedEndpoint(t.db);
    const many = [one.id];
    for (let i = 0; i < 12; i++) many.push((await pricedEndpoint(t.db)).id);
    expect(await count([one.id])).toBe(9);
    expect(await count(many)).toBe(9);
  });

  it("someone told: red without an enabled destination, amber until one delivers or when the latest failed, green when it got through", async () => {
    const e = await pricedEndpoint(t.db);
    const told = async () => (await readinessOf(t.db, { endpointIds: [e.id], now: NOW })).get(e.id)?.told;
    const destination = async (enabled: boolean) => {
      const [d] = await t.db
        .insert(alertDestinations)
        .values({ name: "hook", kind: "webhook", target: "https://example.com/hook", enabled, createdBy: "t" })
        .returning();
      if (!d) throw new Error("no destination");
      return d.id;
    };
    let n = 0;
    const delivered = async (destinationId: number, state: "delivered" | "failed" | "pending") => {
      n += 1;
      const [a] = await t.db
        .insert(alerts)
        .values({ kind: "digest", dedupeKey: `told-${n}-${Date.now()}`, message: "m" })
        .returning();
      if (!a) throw new Error("no alert");
      await t.db.insert(alertDeliveries).values({ alertId: a.id, destinationId, state });
    };

    expect((await told())?.color).toBe("red");
    const off = await destination(false);
    await delivered(off, "delivered");
    expect((await told())?.color).toBe("red");

    const on = await destination(true);
    expect(await told()).toMatchObject({ color: "amber", figure: "1 enabled destination" });
    await delivered(on, "delivered");
    expect((await told())?.color).toBe("green");
    await delivered(on, "failed");
    expect((await told())?.color).toBe("amber");
    // Still being retried: not finished, so the failure above is still the latest word.
    await delivered(on, "pending");
    expect((await told())?.color).toBe("amber");
    await delivered(on, "delivered");
    expect((await told())?.color).toBe("green");
  });

  it("counts only final days: not one still holding reservations, nor one a provider may still report", async () => {
    const e = await pricedEndpoint(t.db);
    await dailyCeiling(e.id, 1000);
    // Final: billed as charged.
    await compared(e.id, "2026-11-10", 1000, 1000);
    // Still holding a reservation: charged 0 of a billed 5,000 so far.
    const heldSource = await makeSource(t.db);
    await addRule(t.db, heldSource, "held", { endpointId: e.id });
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-11T12:00:00Z"), state: "held", amount: 5000, money: 5000 * CENT });
    await writeDays(t.db, heldSource, ["2026-11-11"], [{ day: "2026-11-11", item: "held", units: 5000, costMicros: null, endpointId: e.id }]);
    await compareSourceDays(t.db, { sourceId: heldSource, days: ["2026-11-11"], now: NOW });
    // Pulled 1 h after its end with no bucket yet: billed 0 of 700 charged, and may still come.
    const lateSource = await makeSource(t.db, { kind: "openai" });
    await addRule(t.db, lateSource, "late", { endpointId: e.id });
    await t.db
      .update(usageSourceRules)
      .set({ createdAt: new Date("2026-11-01T00:00:00Z") })
      .where(eq(usageSourceRules.sourceId, lateSource));
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-13T12:00:00Z"), state: "settled", amount: 700, money: 700 * CENT });
    await writeDays(t.db, lateSource, ["2026-11-13"], [], { pulledAt: new Date("2026-11-14T01:00:00Z") });
    await compareSourceDays(t.db, { sourceId: lateSource, days: ["2026-11-13"], now: NOW });

    const r = (await readinessOf(t.db, { now: NOW })).get(e.id);
    expect(r?.reserved).toMatchObject({ color: "green", figure: "100.0 %" });
    expect(r?.reserved.detail).toContain("over 1 compared day of the last 7");
  });
});
