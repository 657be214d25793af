import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alerts, reconciliationDays, reservations, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { insertBudget } from "@/lib/budgets/read-fixtures";
import { startFixtureProcess } from "@/lib/enforcement/test-fixtures";
import { chargedBetween } from "./charged";
import { compareSourceDays, compareSourceDaysDetailed, recompareRecent } from "./compare";
import { addRule, makeSource, pricedEndpoint, reservation, resolveReservation, writeDays } from "./compare-fixtures";
import { dayBounds } from "./days";
import { reconciliationGrid } from "./read";

const NOW = new Date("2026-11-14T12:00:00Z");
const CENT = 10_000;

/** Rules written before the (back-dated) pulls of a test: they map the day's targets. */
async function backdateRules(db: Parameters<typeof chargedBetween>[0], sourceId: number) {
  await db
    .update(usageSourceRules)
    .set({ createdAt: new Date("2026-11-01T00:00:00Z") })
    .where(eq(usageSourceRules.sourceId, sourceId));
}

async function alertsOf(db: Parameters<typeof chargedBetween>[0], dedupe: string) {
  return db.select().from(alerts).where(eq(alerts.dedupeKey, dedupe));
}

describe.skipIf(skipWithoutDatabase())("reconciliation comparison", () => {
  const t = useTestDatabase("recon_compare", { max: 8 });

  it("charges settled (overruns included) and expired reservations, not released ones, and counts held", async () => {
    const e = await pricedEndpoint(t.db);
    const at = new Date("2026-11-10T15:00:00Z");
    await reservation(t.db, { endpointId: e.id, at, state: "settled", amount: 100, money: 100 * CENT, settled: 80, settledMoney: 80 * CENT });
    await reservation(t.db, { endpointId: e.id, at, state: "settled", amount: 100, money: 100 * CENT, settled: 130, settledMoney: 130 * CENT });
    await reservation(t.db, { endpointId: e.id, at, state: "expired", amount: 50, money: 50 * CENT });
    await reservation(t.db, { endpointId: e.id, at, state: "released", amount: 70, money: 70 * CENT });
    await reservation(t.db, { endpointId: e.id, at, state: "held", amount: 40, money: 40 * CENT });
    const other = await pricedEndpoint(t.db);
    const { start, end } = dayBounds("2026-11-10", "UTC");
    const charged = await chargedBetween(t.db, [e.id, other.id], start, end);
    expect(charged.get(e.id)).toEqual({ units: 80 + 130 + 50, micros: (80 + 130 + 50) * CENT, held: 1 });
    expect(charged.get(other.id)).toEqual({ units: 0, micros: 0, held: 0 });
  });

  it("counts an overrun reported after a release or an expiry as the ledger charged it (settle.sql keeps the state)", async () => {
    const e = await pricedEndpoint(t.db);
    const at = new Date("2026-11-02T12:00:00Z");
    // What settle.sql leaves after a settle of 150 on a reservation of 100 already released / expired:
    // the state unchanged, overrun = true, settled_amount/settled_money = the actual.
    for (const state of ["released", "expired"] as const) {
      await t.db.insert(reservations).values({
        endpointId: e.id,
        amount: 100,
        money: 100 * CENT,
        state,
        overrun: true,
        settledAmount: 150,
        settledMoney: 150 * CENT,
        charges: [],
        createdAt: at,
        expiresAt: new Date(at.getTime() + 60_000),
        resolvedAt: at,
      });
    }
    // An expired one whose late report was below the reservation: the reservation still counts whole.
    await t.db.insert(reservations).values({
      endpointId: e.id,
      amount: 100,
      money: 100 * CENT,
      state: "expired",
      overrun: true,
      settledAmount: 60,
      settledMoney: 60 * CENT,
      charges: [],
      createdAt: at,
      expiresAt: new Date(at.getTime() + 60_000),
      resolvedAt: at,
    });
    const { start, end } = dayBounds("2026-11-02", "UTC");
    // released + overrun: the actual, 150; expired + overrun: 100 + (150 − 100) = 150; the last: 100.
    expect((await chargedBetween(t.db, [e.id], start, end)).get(e.id)).toEqual({ units: 400, micros: 400 * CENT, held: 0 });
  });

  it("counts a reservation at 23:59 and one at 00:01 New York time in their own provider days", async () => {
    const e = await pricedEndpoint(t.db);
    // 2026-11-10 is EST (UTC−5): its day runs 05:00Z to 05:00Z the next day.
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-11T04:59:00Z"), state: "settled", amount: 7, money: 7 * CENT });
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-11T05:01:00Z"), state: "settled", amount: 11, money: 11 * CENT });
    const tenth = dayBounds("2026-11-10", "America/New_York");
    const eleventh = dayBounds("2026-11-11", "America/New_York");
    expect((await chargedBetween(t.db, [e.id], tenth.start, tenth.end)).get(e.id)?.units).toBe(7);
    expect((await chargedBetween(t.db, [e.id], eleventh.start, eleventh.end)).get(e.id)?.units).toBe(11);
    // In UTC days both fall on the 11th.
    const utc = dayBounds("2026-11-11", "UTC");
    expect((await chargedBetween(t.db, [e.id], utc.start, utc.end)).get(e.id)?.units).toBe(18);
  });

  it("writes billed beside charged, alerts once per endpoint and day, and a revised re-pull neither duplicates nor alerts twice", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { timeZone: "America/New_York" });
    await addRule(t.db, sourceId, "email-*", { endpointId: e.id });
    const day = "2026-11-10";
    // 900 units charged inside the New York day; one more just outside it.
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-10T05:00:00Z"), state: "settled", amount: 900, money: 900 * CENT });
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-10T04:59:59Z"), state: "settled", amount: 500, money: 500 * CENT });
    await writeDays(t.db, sourceId, [day], [{ day, item: "email-send", units: 1000, costMicros: null, endpointId: e.id }]);

    const [row] = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    expect(row).toMatchObject({
      endpointId: e.id,
      day,
      billedUnits: 1000,
      billedMicros: 1000 * CENT,
      billedMoney: "priced",
      chargedUnits: 900,
      chargedMicros: 900 * CENT,
      heldReservations: 0,
    });
    expect(row?.dayStart.toISOString()).toBe("2026-11-10T05:00:00.000Z");

    const key = `reconciliation:endpoint:${e.id}:${day}`;
    const [alert] = await alertsOf(t.db, key);
    expect(alert).toMatchObject({ kind: "reconciliation", endpointId: e.id });
    expect(alert?.message).toContain("+10.0 %");
    expect(alert?.message).toContain("more billed than charged: calls bypass Ceilings or settle low");
    expect(alert?.details).toEqual({
      day,
      sourceId,
      billedUnits: 1000,
      chargedUnits: 900,
      diffUnits: 100,
      billedMicros: 10_000_000,
      chargedMicros: 9_000_000,
      diffMicros: 1_000_000,
      percent: 10,
      currency: "USD",
      from: "2026-11-10T05:00:00.000Z",
      to: "2026-11-11T05:00:00.000Z",
    });

    // The provider revises the day (reported money now), and it is compared again, twice.
    await writeDays(t.db, sourceId, [day], [{ day, item: "email-send", units: 1200, costMicros: 12_500_000, endpointId: e.id }]);
    await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    const rows = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ billedUnits: 1200, billedMicros: 12_500_000, billedMoney: "reported" });
    expect(await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, e.id))).toHaveLength(1);
    expect(await alertsOf(t.db, key)).toHaveLength(1);
  });

  it("a pulled day without rows is billed zero; a day never pulled is not compared", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "sms", { endpointId: e.id });
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-08T10:00:00Z"), state: "settled", amount: 300, money: 300 * CENT });
    await writeDays(t.db, sourceId, ["2026-11-08"], []);
    const rows = await compareSourceDays(t.db, { sourceId, days: ["2026-11-08", "2026-11-09", "not a day"], now: NOW });
    expect(rows.map((r) => [r.day, r.billedUnits, r.chargedUnits])).toEqual([["2026-11-08", 0, 300]]);
    const [alert] = await alertsOf(t.db, `reconciliation:endpoint:${e.id}:2026-11-08`);
    expect(alert?.message).toContain("less billed than charged: settles overstate");
  });

  it("under the threshold writes the day and fires nothing", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "x", { endpointId: e.id });
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 990, money: 990 * CENT });
    await writeDays(t.db, sourceId, ["2026-11-09"], [{ day: "2026-11-09", item: "x", units: 1000, costMicros: null, endpointId: e.id }]);
    expect(await compareSourceDays(t.db, { sourceId, days: ["2026-11-09"], now: NOW })).toHaveLength(1);
    expect(await alertsOf(t.db, `reconciliation:endpoint:${e.id}:2026-11-09`)).toHaveLength(0);
  });

  it("compares a budget: its rows' money beside the sum of its members' charges", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    const budget = await insertBudget(t.db, { members: [a.id, b.id] });
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "line-*", { budgetId: budget.id });
    const day = "2026-11-09";
    await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-09T01:00:00Z"), state: "settled", amount: 100, money: 3_000_000 });
    await reservation(t.db, { endpointId: b.id, at: new Date("2026-11-09T23:00:00Z"), state: "expired", amount: 50, money: 2_000_000 });
    await writeDays(
      t.db,
      sourceId,
      [day],
      [
        { day, item: "line-a", units: 100, costMicros: 2_000_000, budgetId: budget.id },
        { day, item: "line-b", units: 40, costMicros: 1_000_000, budgetId: budget.id },
        { day, item: "unmapped", units: 5, costMicros: 9_000_000 },
      ],
    );
    const rows = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      budgetId: budget.id,
      endpointId: null,
      billedUnits: 140,
      billedMicros: 3_000_000,
      billedMoney: "reported",
      chargedUnits: 150,
      chargedMicros: 5_000_000,
    });
    const [alert] = await alertsOf(t.db, `reconciliation:budget:${budget.id}:${day}`);
    expect(alert?.endpointId).toBeNull();
    expect(alert?.budgetId).toBe(budget.id);
    expect(alert?.details).toMatchObject({ budgetId: budget.id, budgetKey: budget.key, diffMicros: -2_000_000 });
    expect(alert?.message).toMatch(/^Budget /);
  });

  it("a budget is billed its own rows and those of its members the source maps by rules of their own", async () => {
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
    await writeDays(
      t.db,
      sourceId,
      [day],
      [
        { day, item: "gpt-4o", units: 100, costMicros: 5_000_000, endpointId: a.id },
        { day, item: "embeddings", units: 100, costMicros: 5_000_000, budgetId: budget.id },
      ],
    );
    const rows = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    // Ledger and bill agree ($10 both): without a's rows the budget would say $5 against $10, −50 %.
    expect(rows.find((r) => r.budgetId === budget.id)).toMatchObject({
      billedUnits: 200,
      billedMicros: 10_000_000,
      billedMoney: "reported",
      chargedMicros: 10_000_000,
    });
    expect(rows.find((r) => r.endpointId === a.id)).toMatchObject({ billedMicros: 5_000_000, chargedMicros: 5_000_000 });
    expect(await alertsOf(t.db, `reconciliation:budget:${budget.id}:${day}`)).toHaveLength(0);
  });

  it("a rule added after a day was pulled does not call that day 'billed nothing' for its target until the day is pulled again", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { lookbackDays: 3 });
    await addRule(t.db, sourceId, "item-a", { endpointId: a.id });
    const day = "2026-11-09";
    const now = new Date("2026-11-10T12:00:00Z");
    const held = await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-09T10:00:00Z"), state: "held", amount: 100, money: 1_000_000 });
    await reservation(t.db, { endpointId: b.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 500, money: 5_000_000 });
    // The provider billed b exactly what Ceilings charged it; no rule mapped item-b at pull time.
    await writeDays(
      t.db,
      sourceId,
      [day],
      [
        { day, item: "item-a", units: 100, costMicros: null, endpointId: a.id },
        { day, item: "item-b", units: 500, costMicros: null },
      ],
    );
    await compareSourceDays(t.db, { sourceId, days: [day], now });
    // Staff map item-b (the page says: "rows already pulled keep their mapping until their day is pulled again").
    await addRule(t.db, sourceId, "item-b", { endpointId: b.id });
    await resolveReservation(t.db, held, "settled");
    await recompareRecent(t.db, now);
    const key = `reconciliation:endpoint:${b.id}:${day}`;
    expect((await alertsOf(t.db, key)).map((f) => f.message)).toEqual([]);
    expect(await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, b.id))).toHaveLength(0);
    // Pulled again, the day's rows carry the new mapping and b is compared: they agree.
    await writeDays(
      t.db,
      sourceId,
      [day],
      [
        { day, item: "item-a", units: 100, costMicros: null, endpointId: a.id },
        { day, item: "item-b", units: 500, costMicros: null, endpointId: b.id },
      ],
    );
    const rows = await compareSourceDays(t.db, { sourceId, days: [day], now });
    expect(rows.find((r) => r.endpointId === b.id)).toMatchObject({ billedUnits: 500, chargedUnits: 500 });
    expect(await alertsOf(t.db, key)).toHaveLength(0);
  });

  it("a day the provider reported nothing for, pulled under 24 h after its end, never alerts from that pull: recompareRecent asks for a fresh pull", async () => {
    const day = "2026-11-13"; // ends 2026-11-14T00:00Z
    const pulledEarly = new Date("2026-11-14T01:00:00Z"); // the daily pull, 1 h after the day's end
    const late = await pricedEndpoint(t.db);
    const lateSource = await makeSource(t.db, { kind: "openai", lookbackDays: 3, lastPullAt: pulledEarly });
    await addRule(t.db, lateSource, "sms", { endpointId: late.id });
    const reported = await pricedEndpoint(t.db);
    const reportedSource = await makeSource(t.db, { lookbackDays: 3 });
    await addRule(t.db, reportedSource, "sms", { endpointId: reported.id });
    for (const s of [lateSource, reportedSource]) await backdateRules(t.db, s);
    for (const e of [late, reported])
      await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-13T10:00:00Z"), state: "settled", amount: 300, money: 300 * CENT });
    // No bucket yet from one provider; the other reported the day (another item), none of it sms.
    await writeDays(t.db, lateSource, [day], [], { pulledAt: pulledEarly });
    await writeDays(t.db, reportedSource, [day], [{ day, item: "voice", units: 9, costMicros: null }], { pulledAt: pulledEarly });

    const [lateRow] = await compareSourceDays(t.db, { sourceId: lateSource, days: [day], now: NOW });
    expect(lateRow).toMatchObject({ billedUnits: 0, chargedUnits: 300 });
    const lateKey = `reconciliation:endpoint:${late.id}:${day}`;
    expect(await alertsOf(t.db, lateKey)).toHaveLength(0);
    await compareSourceDays(t.db, { sourceId: reportedSource, days: [day], now: NOW });
    expect(await alertsOf(t.db, `reconciliation:endpoint:${reported.id}:${day}`)).toHaveLength(1);
    const requested = async () =>
      (await t.db.select({ at: usageSources.pullRequestedAt }).from(usageSources).where(eq(usageSources.id, lateSource)))[0]?.at ?? null;

    // Still within the 24 h: no alert, no pull asked for.
    await recompareRecent(t.db, new Date("2026-11-14T23:59:00Z"));
    expect(await alertsOf(t.db, lateKey)).toHaveLength(0);
    expect(await requested()).toBeNull();
    // 24 h past the day's end: the early pull's zero is still not final, whoever compares it, at any time.
    const final = new Date("2026-11-15T00:00:00Z");
    expect((await recompareRecent(t.db, final)).pullsRequested).toBe(1);
    await compareSourceDays(t.db, { sourceId: lateSource, days: [day], now: new Date("2026-11-16T00:00:00Z") });
    expect(await alertsOf(t.db, lateKey)).toHaveLength(0);
    // A fresh pull is asked for (once: asked again, nothing changes), and that pull decides.
    expect((await requested())?.toISOString()).toBe(final.toISOString());
    expect((await recompareRecent(t.db, new Date("2026-11-15T00:10:00Z"))).pullsRequested).toBe(0);
    await t.db
      .update(usageSources)
      .set({ pullRequestedAt: null, lastPullAt: new Date("2026-11-15T01:00:00Z") })
      .where(eq(usageSources.id, lateSource));
    expect((await recompareRecent(t.db, new Date("2026-11-15T02:00:00Z"))).pullsRequested).toBe(0);
    // The fresh pull reports the day: billed what was charged, no alert.
    await writeDays(t.db, lateSource, [day], [{ day, item: "sms", units: 300, costMicros: 3_000_000, endpointId: late.id }], {
      pulledAt: new Date("2026-11-15T01:00:00Z"),
    });
    const [fresh] = await compareSourceDays(t.db, { sourceId: lateSource, days: [day], now: new Date("2026-11-15T01:00:00Z") });
    expect(fresh).toMatchObject({ billedUnits: 300, chargedUnits: 300 });
    expect(await alertsOf(t.db, lateKey)).toHaveLength(0);
  });

  it("a day still empty when pulled 24 h after its end is final: it alerts", async () => {
    const day = "2026-11-12";
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { kind: "openai", lookbackDays: 3 });
    await addRule(t.db, sourceId, "sms", { endpointId: e.id });
    await backdateRules(t.db, sourceId);
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-12T10:00:00Z"), state: "settled", amount: 300, money: 300 * CENT });
    await writeDays(t.db, sourceId, [day], [], { pulledAt: new Date("2026-11-14T00:00:00Z") });
    await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    const [alert] = await alertsOf(t.db, `reconciliation:endpoint:${e.id}:${day}`);
    expect(alert?.message).toContain("less billed than charged");
  });

  it("OpenAI or Anthropic usage without a cost row is not final until pulled 24 h after the day's end (costs come later)", async () => {
    const day = "2026-11-12"; // ends 2026-11-13T00:00Z
    for (const kind of ["openai", "anthropic"] as const) {
      const e = await pricedEndpoint(t.db);
      const sourceId = await makeSource(t.db, { kind, lookbackDays: 3 });
      await addRule(t.db, sourceId, "gpt-4o", { endpointId: e.id });
      await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-12T10:00:00Z"), state: "settled", amount: 1000, money: 5_000_000 });
      const key = `reconciliation:endpoint:${e.id}:${day}`;
      // Tokens reported, their cost not yet: priced at the first part, a false drift if alerted.
      await writeDays(t.db, sourceId, [day], [{ day, item: "gpt-4o", units: 1000, costMicros: null, endpointId: e.id }], {
        pulledAt: new Date("2026-11-13T02:00:00Z"),
      });
      await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
      expect(await alertsOf(t.db, key)).toHaveLength(0);
      // The cost row arrives with the next pull: final, and compared in the provider's money.
      await writeDays(
        t.db,
        sourceId,
        [day],
        [
          { day, item: "gpt-4o", units: 1000, costMicros: null, endpointId: e.id },
          { day, item: "gpt-4o", units: 0, costMicros: 9_000_000, endpointId: e.id },
        ],
        { pulledAt: new Date("2026-11-13T02:00:00Z") },
      );
      const [row] = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
      expect(row).toMatchObject({ billedMicros: 9_000_000, billedMoney: "reported" });
      expect(await alertsOf(t.db, key)).toHaveLength(1);
    }
    // A file source's count-only day is final at once (it has no cost report to wait for).
    const e = await pricedEndpoint(t.db);
    const fileSource = await makeSource(t.db, { lookbackDays: 3 });
    await addRule(t.db, fileSource, "x", { endpointId: e.id });
    await writeDays(t.db, fileSource, [day], [{ day, item: "x", units: 1000, costMicros: null, endpointId: e.id }], {
      pulledAt: new Date("2026-11-13T02:00:00Z"),
    });
    await compareSourceDays(t.db, { sourceId: fileSource, days: [day], now: NOW });
    expect(await alertsOf(t.db, `reconciliation:endpoint:${e.id}:${day}`)).toHaveLength(1);
  });

  it("today and later days are stored, not compared", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { timeZone: "America/New_York" });
    await addRule(t.db, sourceId, "x", { endpointId: e.id });
    // NOW is 2026-11-14T12:00Z, 07:00 in New York: the 14th is today there, the 13th is over.
    const days = ["2026-11-13", "2026-11-14", "2026-11-15"];
    await writeDays(
      t.db,
      sourceId,
      days,
      days.map((day) => ({ day, item: "x", units: 1000, costMicros: null, endpointId: e.id })),
    );
    const out = await compareSourceDaysDetailed(t.db, { sourceId, days, now: NOW });
    expect(out.rows.map((r) => r.day)).toEqual(["2026-11-13"]);
    expect(out.notOver).toEqual(["2026-11-14", "2026-11-15"]);
    expect(await alertsOf(t.db, `reconciliation:endpoint:${e.id}:2026-11-14`)).toHaveLength(0);
    expect((await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, e.id))).map((r) => r.day)).toEqual(["2026-11-13"]);
    // Once the 14th is over in New York (05:00Z on the 15th), it is compared.
    const later = await compareSourceDaysDetailed(t.db, { sourceId, days, now: new Date("2026-11-15T05:00:00Z") });
    expect(later.rows.map((r) => r.day)).toEqual(["2026-11-13", "2026-11-14"]);
  });

  it("a budget whose rows carry no money is compared in units only: no false −100 %", async () => {
    const a = await pricedEndpoint(t.db);
    const budget = await insertBudget(t.db, { members: [a.id] });
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "sends", { budgetId: budget.id });
    await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 1000, money: 10_000_000 });
    await reservation(t.db, { endpointId: a.id, at: new Date("2026-11-10T10:00:00Z"), state: "settled", amount: 1000, money: 10_000_000 });
    await writeDays(
      t.db,
      sourceId,
      ["2026-11-09", "2026-11-10"],
      [
        { day: "2026-11-09", item: "sends", units: 1000, costMicros: null, budgetId: budget.id },
        { day: "2026-11-10", item: "sends", units: 1500, costMicros: null, budgetId: budget.id },
      ],
    );
    const rows = await compareSourceDays(t.db, { sourceId, days: ["2026-11-09", "2026-11-10"], now: NOW });
    expect(rows.map((r) => [r.day, r.billedUnits, r.billedMicros, r.chargedUnits, r.chargedMicros])).toEqual([
      ["2026-11-09", 1000, 0, 1000, 10_000_000],
      ["2026-11-10", 1500, 0, 1000, 10_000_000],
    ]);
    // Units agree on the 9th: no alert, though money reads $0 against $10.
    expect(await alertsOf(t.db, `reconciliation:budget:${budget.id}:2026-11-09`)).toHaveLength(0);
    // 1,500 billed against 1,000 charged on the 10th is a drift in units, and alerts.
    const [alert] = await alertsOf(t.db, `reconciliation:budget:${budget.id}:2026-11-10`);
    expect(alert?.details).toMatchObject({ diffUnits: 500, percent: 33.33 });
    // The grid says the same: units only, the 9th within, the 10th over.
    const grid = (await reconciliationGrid(t.db, { now: NOW })).find((r) => r.target === "budget" && r.id === budget.id);
    expect(grid?.days.filter((d) => d.billed !== null).map((d) => [d.day, d.unitsOnly, d.drift?.over, d.drift?.percent])).toEqual([
      ["2026-11-09", true, false, 0],
      ["2026-11-10", true, true, expect.closeTo(33.33, 2)],
    ]);
    expect(grid?.overDays).toBe(1);
  });

  it("a comparison reads and writes under the source's lock: a pull landing meanwhile is never overwritten by older numbers", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "x", { endpointId: e.id });
    const day = "2026-11-08";
    await writeDays(t.db, sourceId, [day], [{ day, item: "x", units: 100, costMicros: null, endpointId: e.id }]);
    // A pull holds the source row (as writeUsageDays does) while a comparison starts.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const pull = t.db.transaction(async (tx) => {
      await tx.select().from(usageSources).where(eq(usageSources.id, sourceId)).for("update");
      locked();
      await held;
      await tx.delete(usageRows).where(eq(usageRows.sourceId, sourceId));
      await tx.insert(usageRows).values({ sourceId, day, item: "x", units: 250, costMicros: null, endpointId: e.id, raw: {} });
    });
    await isLocked;
    const comparing = compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    await new Promise((r) => setTimeout(r, 200));
    release();
    await pull;
    const [row] = await comparing;
    expect(row?.billedUnits).toBe(250);
    const [stored] = await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, e.id));
    expect(stored?.billedUnits).toBe(250);
  });

  it("a target the source no longer maps loses that day's comparison", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "gone", { endpointId: e.id });
    await writeDays(t.db, sourceId, ["2026-11-07"], []);
    expect(await compareSourceDays(t.db, { sourceId, days: ["2026-11-07"], now: NOW })).toHaveLength(1);
    await t.db.delete(usageSourceRules).where(eq(usageSourceRules.sourceId, sourceId));
    expect(await compareSourceDays(t.db, { sourceId, days: ["2026-11-07"], now: NOW })).toHaveLength(0);
    expect(await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.sourceId, sourceId))).toHaveLength(0);
  });

  it("a day with held reservations is written but not alerted until recompareRecent finds them resolved", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db, { lookbackDays: 3 });
    await addRule(t.db, sourceId, "h", { endpointId: e.id });
    const day = "2026-11-13";
    const held = await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-13T10:00:00Z"), state: "held", amount: 500, money: 500 * CENT });
    await writeDays(t.db, sourceId, [day], [{ day, item: "h", units: 1000, costMicros: null, endpointId: e.id }]);
    const [row] = await compareSourceDays(t.db, { sourceId, days: [day], now: NOW });
    expect(row).toMatchObject({ chargedUnits: 0, heldReservations: 1 });
    const key = `reconciliation:endpoint:${e.id}:${day}`;
    expect(await alertsOf(t.db, key)).toHaveLength(0);

    // Still held: recompared, still not final.
    expect((await recompareRecent(t.db, NOW)).days).toBeGreaterThanOrEqual(1);
    expect(await alertsOf(t.db, key)).toHaveLength(0);

    // Expired: the whole reservation counts as spent, 500 of 1,000 billed, and now it alerts.
    await resolveReservation(t.db, held, "expired");
    await recompareRecent(t.db, NOW);
    const [after] = await t.db
      .select()
      .from(reconciliationDays)
      .where(and(eq(reconciliationDays.endpointId, e.id), eq(reconciliationDays.day, day)));
    expect(after).toMatchObject({ chargedUnits: 500, heldReservations: 0 });
    expect(await alertsOf(t.db, key)).toHaveLength(1);
    // Nothing left open for this source.
    const open = await t.db
      .select({ n: sql<number>`count(*)::int` })
      .from(reconciliationDays)
      .where(and(eq(reconciliationDays.sourceId, sourceId), sql`held_reservations > 0`));
    expect(open[0]?.n).toBe(0);
  });

  it("fires the alert exactly once when two processes compare the same day many times at once", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "race", { endpointId: e.id });
    const days = ["2026-11-11", "2026-11-12"];
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-11T10:00:00Z"), state: "settled", amount: 100, money: 100 * CENT });
    await writeDays(
      t.db,
      sourceId,
      days,
      days.map((day) => ({ day, item: "race", units: 1000, costMicros: null, endpointId: e.id })),
    );

    const other = startFixtureProcess<{ rows: number; errors: string[] }>(path.join(__dirname, "compare.fixture.ts"), [
      t.url,
      String(sourceId),
      days.join(","),
      "8",
    ]);
    await other.ready;
    other.send();
    const here = await Promise.allSettled(Array.from({ length: 8 }, () => compareSourceDays(t.db, { sourceId, days, now: NOW })));
    const there = await other.done;
    expect(here.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect(there.errors).toEqual([]);
    expect(there.rows).toBe(16);

    for (const day of days) expect(await alertsOf(t.db, `reconciliation:endpoint:${e.id}:${day}`)).toHaveLength(1);
    expect(await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, e.id))).toHaveLength(2);
  }, 60_000);
});
