import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, ceilings, endpoints, type NewAuditEvent } from "@/db/schema";
import { openPostgres } from "@/db/client";
import { skipWithoutDatabase, type TestDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { dailySpend, monthToDate, overviewTrends, SpendNotFoundError } from "./index";
import { insertCounters } from "@/lib/counters/insert";

// A hand-made history. "Now" is 2025-03-20 12:00 UTC. Every expected number below is worked out
// by hand from these rows (see the comments), not by running the code under test.

const NOW = new Date("2025-03-20T12:00:00Z");
const at = (iso: string) => new Date(iso);
const ms = (iso: string) => at(iso).getTime();

type Ids = { a: number; b: number; c: number; d: number; e: number; aDaily: number; aMonthly: number };

async function seedHistory(t: TestDatabase): Promise<Ids> {
  const [a, b, c, d, e] = await t.db
    .insert(endpoints)
    .values([
      // Billed from the 15th; 400 micros ($0.0004) per email; 3,000 a month.
      { key: "a.email", name: "A", unit: "emails", parts: [{ name: "units", pricePico: 400_000_000 }], perCallMax: 1, planAllowance: 3000, billingDay: 15 },
      // Only a per-caller daily ceiling: spend is the sum of the accounts' counters.
      { key: "b.sms", name: "B", unit: "messages", parts: [{ name: "units", pricePico: 7_900_000_000 }], perCallMax: 1, planAllowance: null, billingDay: 1 },
      // No ceilings at all.
      { key: "c.none", name: "C", unit: "calls", parts: [{ name: "units", pricePico: 100_000_000 }], perCallMax: 1, planAllowance: 1000, billingDay: 1 },
      // Input and output tokens at $2.50 and $10 per 1M: money read from units is at most 10 micros a token.
      {
        key: "d.llm",
        name: "D",
        unit: "tokens",
        parts: [
          { name: "input", pricePico: 2_500_000 },
          { name: "output", pricePico: 10_000_000 },
        ],
        perCallMax: 8000,
        planAllowance: 100_000,
        billingDay: 1,
      },
      // $0.02 per 1M tokens: 0.02 micros a token, so a day's money is a fraction of a micro, rounded up.
      { key: "e.embed", name: "E", unit: "tokens", parts: [{ name: "units", pricePico: 20_000 }], perCallMax: 8000, planAllowance: null, billingDay: 1 },
    ])
    .returning({ id: endpoints.id });
  if (!a || !b || !c || !d || !e) throw new Error("endpoints not inserted");
  const base = { minValue: 0, maxValue: 10_000 } as const;
  // A's per-caller ceiling is created first (lowest id): the global one must still be preferred.
  const [aCaller, aDaily, aMonthly, bCaller, dDaily, eDaily] = await t.db
    .insert(ceilings)
    .values([
      { ...base, endpointId: a.id, metric: "units", scope: "caller", window: "utc_day", value: 50, defaultValue: 50 },
      { ...base, endpointId: a.id, metric: "units", scope: "global", window: "utc_day", value: 120, defaultValue: 100 },
      { ...base, endpointId: a.id, metric: "units", scope: "global", window: "billing_month", value: 0, valueBeforeKill: 3000, defaultValue: 3000 },
      { ...base, endpointId: b.id, metric: "units", scope: "caller", window: "utc_day", value: 5, defaultValue: 5 },
      { ...base, endpointId: d.id, metric: "units", scope: "global", window: "utc_day", value: 5000, defaultValue: 5000 },
      { ...base, endpointId: e.id, metric: "units", scope: "global", window: "utc_day", value: 9000, defaultValue: 9000 },
    ])
    .returning({ id: ceilings.id });
  if (!aCaller || !aDaily || !aMonthly || !bCaller || !dDaily || !eDaily) throw new Error("ceilings not inserted");

  const day = (d: string, ceilingId: number, settled: number, held = 0, scopeKey = "") => ({
    ceilingId,
    scopeKey,
    windowStart: at(`${d}T00:00:00Z`),
    windowEnd: new Date(ms(`${d}T00:00:00Z`) + 86_400_000),
    settled,
    held,
  });
  await insertCounters(t.db, [
    day("2025-02-18", aDaily.id, 999), // one day before the 30-day range, inside the 90-day one
    day("2025-02-19", aDaily.id, 10), // first day of the 30-day range
    day("2025-03-10", aDaily.id, 50, 5), // settled + held = 55
    day("2025-03-14", aDaily.id, 80), // the day before the billing month starts
    day("2025-03-15", aDaily.id, 30),
    day("2025-03-16", aDaily.id, 40),
    day("2025-03-18", aDaily.id, 20),
    day("2025-03-20", aDaily.id, 7, 3), // today so far: 10
    // Per-caller counters of A must not be added to its global total.
    day("2025-03-15", aCaller.id, 500, 0, "acct_a"),
    // A's monthly counter is not a daily figure.
    { ceilingId: aMonthly.id, scopeKey: "", windowStart: at("2025-03-15T00:00:00Z"), windowEnd: at("2025-04-15T00:00:00Z"), settled: 100 },
    day("2025-03-19", bCaller.id, 3, 0, "acct_a"),
    day("2025-03-19", bCaller.id, 4, 1, "acct_b"), // 3 + 5 = 8 on the 19th
    day("2025-03-20", bCaller.id, 2, 0, "acct_a"),
    day("2025-03-19", dDaily.id, 1200),
    day("2025-03-20", dDaily.id, 3, 0),
    day("2025-03-19", eDaily.id, 55),
    day("2025-03-20", eDaily.id, 8000),
  ]);

  const event = (ceilingId: number, action: string, iso: string, previousValue: number, appliedValue: number): NewAuditEvent => ({
    actorType: "staff",
    actor: "admin@test.local",
    action,
    endpointId: a.id,
    endpointKey: "a.email",
    ceilingId,
    previousValue,
    appliedValue,
    at: at(iso),
  });
  await t.db.insert(auditEvents).values([
    // The daily ceiling: 100 → 80 on the 12th, killed on the 16th, restored on the 17th, 120 on the 19th.
    event(aDaily.id, "ceiling.adjust", "2025-03-12T10:00:00Z", 100, 80),
    event(aDaily.id, "ceiling.kill", "2025-03-16T14:00:00Z", 80, 0),
    event(aDaily.id, "ceiling.restore", "2025-03-17T09:00:00Z", 0, 80),
    event(aDaily.id, "ceiling.adjust", "2025-03-19T08:00:00Z", 80, 120),
    // The monthly ceiling: an old kill outside both ranges, one that started before the 30-day
    // range, the same kill as the daily one, and an adjustment to 0 that is still in force.
    event(aMonthly.id, "ceiling.kill", "2025-01-05T00:00:00Z", 3000, 0),
    event(aMonthly.id, "ceiling.restore", "2025-01-06T00:00:00Z", 0, 3000),
    event(aMonthly.id, "ceiling.kill", "2025-02-10T00:00:00Z", 3000, 0),
    event(aMonthly.id, "ceiling.restore", "2025-02-20T06:00:00Z", 0, 3000),
    event(aMonthly.id, "ceiling.kill", "2025-03-16T14:00:00Z", 3000, 0),
    event(aMonthly.id, "ceiling.restore", "2025-03-17T09:00:00Z", 0, 3000),
    event(aMonthly.id, "ceiling.adjust", "2025-03-20T10:00:00Z", 3000, 0),
    // Not a value change: ignored.
    { ...event(aDaily.id, "override.set", "2025-03-13T00:00:00Z", 1, 2) },
  ]);
  return { a: a.id, b: b.id, c: c.id, d: d.id, e: e.id, aDaily: aDaily.id, aMonthly: aMonthly.id };
}

describe.skipIf(skipWithoutDatabase())("spend aggregations", () => {
  const t = useTestDatabase("spend");
  let ids: Ids;
  beforeAll(async () => {
    ids = await seedHistory(t);
  });

  it("sums each UTC day over 30 days with zeros for empty days, money in micros", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.a, days: 30, now: NOW });
    expect(s.source).toBe("global");
    expect(s.days).toHaveLength(30);
    expect(s.days[0]?.day).toBe("2025-02-19");
    expect(s.days[29]?.day).toBe("2025-03-20");
    const units = Object.fromEntries(s.days.filter((d) => d.units > 0).map((d) => [d.day, d.units]));
    expect(units).toEqual({
      "2025-02-19": 10,
      "2025-03-10": 55,
      "2025-03-14": 80,
      "2025-03-15": 30,
      "2025-03-16": 40,
      "2025-03-18": 20,
      "2025-03-20": 10,
    });
    expect(s.days.find((d) => d.day === "2025-03-10")?.moneyMicros).toBe(55 * 400);
    // 10 + 55 + 80 + 30 + 40 + 20 + 10
    expect(s.totalUnits).toBe(245);
    expect(s.totalMoneyMicros).toBe(98_000);
  });

  it("reconstructs the daily ceiling from the adjustment log as a step line", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.a, days: 30, now: NOW });
    const pick = (day: string) => {
      const d = s.days.find((x) => x.day === day);
      return d && [d.ceilingAtStart, d.ceiling, d.ceilingChanges];
    };
    // Before the first change the value is what that change replaced (100), not today's 120.
    expect(pick("2025-02-19")).toEqual([100, 100, 0]);
    expect(pick("2025-03-11")).toEqual([100, 100, 0]);
    expect(pick("2025-03-12")).toEqual([100, 80, 1]);
    expect(pick("2025-03-13")).toEqual([80, 80, 0]); // the override.set that day is not a value change
    expect(pick("2025-03-16")).toEqual([80, 0, 1]);
    expect(pick("2025-03-17")).toEqual([0, 80, 1]);
    expect(pick("2025-03-18")).toEqual([80, 80, 0]);
    expect(pick("2025-03-19")).toEqual([80, 120, 1]);
    expect(pick("2025-03-20")).toEqual([120, 120, 0]);
  });

  it("merges kill periods across ceilings, clips them to the range and keeps one still open", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.a, days: 30, now: NOW });
    expect(s.kills).toEqual([
      { start: ms("2025-02-19T00:00:00Z"), end: ms("2025-02-20T06:00:00Z") },
      { start: ms("2025-03-16T14:00:00Z"), end: ms("2025-03-17T09:00:00Z") },
      { start: ms("2025-03-20T10:00:00Z"), end: null },
    ]);
  });

  it("keeps UTC days in a session whose time zone crosses a DST change (US, 2025-03-09)", async () => {
    const newYork = openPostgres(t.url, { max: 1, connection: { TimeZone: "America/New_York" } });
    try {
      const there = await dailySpend(newYork.db, { endpointId: ids.a, days: 30, now: NOW });
      const here = await dailySpend(t.db, { endpointId: ids.a, days: 30, now: NOW });
      expect(there).toEqual(here);
      const month = await monthToDate(newYork.db, { endpointId: ids.a, now: NOW });
      expect(month.days.slice(0, 6).map((d) => d.cumulativeUnits)).toEqual([30, 70, 70, 90, 90, 100]);
    } finally {
      await newYork.close();
    }
  });

  it("reaches back 90 days", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.a, days: 90, now: NOW });
    expect(s.days).toHaveLength(90);
    expect(s.days[0]?.day).toBe("2024-12-21");
    expect(s.totalUnits).toBe(245 + 999);
    expect(s.days[0]?.ceiling).toBe(100);
    expect(s.kills.map((k) => k.start)).toEqual([
      ms("2025-01-05T00:00:00Z"),
      ms("2025-02-10T00:00:00Z"),
      ms("2025-03-16T14:00:00Z"),
      ms("2025-03-20T10:00:00Z"),
    ]);
  });

  it("falls back to the sum of per-caller counters, with no ceiling line", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.b, days: 30, now: NOW });
    expect(s.source).toBe("per_caller");
    expect(s.days.slice(-2).map((d) => [d.day, d.units, d.moneyMicros, d.ceiling])).toEqual([
      ["2025-03-19", 8, 8 * 7900, null],
      ["2025-03-20", 2, 2 * 7900, null],
    ]);
    expect(s.totalUnits).toBe(10);
    expect(s.kills).toEqual([]);
  });

  it("prices a single part exactly, rounding a fraction of a micro up, never down", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.e, days: 30, now: NOW });
    expect([s.pricePico, s.moneyAtMost]).toEqual([20_000, false]);
    // 55 tokens at 0.02 micros: 1.1 micros, shown as 2; 8000 tokens: 160 micros exactly.
    expect(s.days.slice(-2).map((d) => [d.units, d.moneyMicros])).toEqual([
      [55, 2],
      [8000, 160],
    ]);
    // 8055 tokens: 161.1 micros, rounded up once over the range.
    expect(s.totalMoneyMicros).toBe(162);
    const m = await monthToDate(t.db, { endpointId: ids.e, now: NOW });
    expect([m.spentUnits, m.spentMicros, m.moneyAtMost]).toEqual([8055, 162, false]);
    expect((await overviewTrends(t.db, { now: NOW })).get(ids.e)).toMatchObject({ totalMoneyMicros: 162, moneyAtMost: false });
  });

  it("prices an endpoint of several parts at its dearest part, and says the money is at most", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.d, days: 30, now: NOW });
    expect([s.pricePico, s.moneyAtMost]).toEqual([10_000_000, true]);
    expect(s.days.slice(-2).map((d) => [d.units, d.moneyMicros])).toEqual([
      [1200, 12_000],
      [3, 30],
    ]);
    expect(s.totalMoneyMicros).toBe(12_030);
    const m = await monthToDate(t.db, { endpointId: ids.d, now: NOW });
    expect([m.spentMicros, m.allowanceMicros, m.moneyAtMost]).toEqual([12_030, 1_000_000, true]);
    const trend = (await overviewTrends(t.db, { now: NOW })).get(ids.d);
    expect(trend).toMatchObject({ totalUnits: 1203, totalMoneyMicros: 12_030, moneyAtMost: true });
    expect(trend?.points.at(-1)).toEqual({ day: "2025-03-20", units: 3, moneyMicros: 30 });
  });

  it("gives an endpoint without daily ceilings a zero axis, and refuses unknown endpoints", async () => {
    const s = await dailySpend(t.db, { endpointId: ids.c, days: 30, now: NOW });
    expect(s.source).toBeNull();
    expect(s.days).toHaveLength(30);
    expect(s.days.every((d) => d.units === 0 && d.ceiling === null)).toBe(true);
    await expect(dailySpend(t.db, { endpointId: 999_999, days: 30, now: NOW })).rejects.toBeInstanceOf(SpendNotFoundError);
    await expect(dailySpend(t.db, { endpointId: ids.a, days: 7 as 30, now: NOW })).rejects.toThrow();
  });

  it("builds month to date from the billing day (15th) with pace and projection", async () => {
    const m = await monthToDate(t.db, { endpointId: ids.a, now: NOW });
    // March 15 to April 15: 31 days; 5.5 days gone by at noon on the 20th.
    expect([m.start, m.end, m.days.length]).toEqual(["2025-03-15", "2025-04-15", 31]);
    expect(m.days.slice(0, 7).map((d) => d.cumulativeUnits)).toEqual([30, 70, 70, 90, 90, 100, null]);
    expect(m.spentUnits).toBe(100); // the 80 of March 14 belongs to the previous billing month
    expect(m.spentMicros).toBe(40_000);
    expect(m.averageDailyUnits).toBe(18); // 100 / 5.5 = 18.18
    expect(m.projectedUnits).toBe(564); // 100 × 31 / 5.5 = 563.6
    expect(m.projectedMicros).toBe(564 * 400);
    expect([m.allowance, m.allowanceMicros]).toEqual([3000, 1_200_000]);
    // Pace at the end of day i is 3000 × (i + 1) / 31.
    expect(m.days[0]?.paceUnits).toBe(97); // 96.77
    expect(m.days[5]?.paceUnits).toBe(581); // 580.65
    expect(m.days[30]?.paceUnits).toBe(3000);
    expect(m.days[30]?.paceMicros).toBe(1_200_000);
    // Projection: null before today, today's spend today, then 100 + 100 × (days left) / 5.5.
    expect(m.days.slice(4, 7).map((d) => d.projectedUnits)).toEqual([null, 100, 127]); // 100 + 100 × 1.5 / 5.5
    expect(m.days[30]?.projectedUnits).toBe(564);
    expect(m.days[30]?.day).toBe("2025-04-14");
  });

  it("builds month to date for a calendar month without allowance from per-caller counters", async () => {
    const m = await monthToDate(t.db, { endpointId: ids.b, now: NOW });
    expect([m.start, m.end, m.days.length, m.source]).toEqual(["2025-03-01", "2025-04-01", 31, "per_caller"]);
    expect(m.days[18]?.cumulativeUnits).toBe(8);
    expect(m.days[19]?.cumulativeUnits).toBe(10);
    expect(m.days.every((d) => d.paceUnits === null)).toBe(true);
    expect(m.allowance).toBeNull();
  });

  it("trends the last 14 days of every endpoint in one query", async () => {
    const trends = await overviewTrends(t.db, { now: NOW });
    const a = trends.get(ids.a);
    expect(a?.points.map((p) => p.day)[0]).toBe("2025-03-07");
    expect(a?.points.map((p) => p.units)).toEqual([0, 0, 0, 55, 0, 0, 0, 80, 30, 40, 0, 20, 0, 10]);
    expect(a?.totalUnits).toBe(235);
    expect(a?.totalMoneyMicros).toBe(235 * 400);
    expect(
      trends
        .get(ids.b)
        ?.points.map((p) => p.units)
        .slice(-2),
    ).toEqual([8, 2]);
    expect(trends.get(ids.b)?.points[13]?.moneyMicros).toBe(2 * 7900);
    expect(trends.get(ids.c)?.points).toHaveLength(14);
    expect(trends.get(ids.c)?.totalUnits).toBe(0);
  });
});
