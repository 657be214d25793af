import { describe, expect, it } from "vitest";
import type { SpendDay } from "@/lib/spend/daily";
import type { MonthToDateSpend } from "@/lib/spend/month";
import { dailyRows, dailySummary, killBands, killedOn, moneyText, monthSummary, sparklineSummary } from "./chart-data";

const ms = (iso: string) => Date.parse(iso);
const DAYS = ["2025-03-14", "2025-03-15", "2025-03-16", "2025-03-17", "2025-03-18"];

function day(d: string, units: number, ceiling: number | null, changes = 0, atStart = ceiling): SpendDay {
  return { day: d, units, moneyMicros: units * 400, ceiling, ceilingAtStart: atStart, ceilingChanges: changes };
}

describe("killBands", () => {
  it("shades every day a kill touches, and runs an open kill to the last day", () => {
    expect(
      killBands(DAYS, [
        { start: ms("2025-03-15T14:00:00Z"), end: ms("2025-03-16T09:00:00Z") },
        { start: ms("2025-03-18T10:00:00Z"), end: null },
      ]).map((b) => [b.x1, b.x2]),
    ).toEqual([
      ["2025-03-15", "2025-03-16"],
      ["2025-03-18", "2025-03-18"],
    ]);
  });

  it("does not shade the day that begins as a kill ends at midnight", () => {
    expect(killBands(DAYS, [{ start: ms("2025-03-15T20:00:00Z"), end: ms("2025-03-16T00:00:00Z") }]).map((b) => [b.x1, b.x2])).toEqual([
      ["2025-03-15", "2025-03-15"],
    ]);
  });

  it("clips to the axis and drops kills outside it", () => {
    expect(
      killBands(DAYS, [
        { start: ms("2025-03-01T00:00:00Z"), end: ms("2025-03-14T05:00:00Z") },
        { start: ms("2025-03-01T00:00:00Z"), end: ms("2025-03-02T00:00:00Z") },
      ]).map((b) => [b.x1, b.x2]),
    ).toEqual([["2025-03-14", "2025-03-14"]]);
    expect(killBands([], [{ start: 0, end: null }])).toEqual([]);
  });

  it("labels a kill with its UTC times", () => {
    const [band] = killBands(DAYS, [{ start: ms("2025-03-15T14:05:00Z"), end: ms("2025-03-15T14:50:00Z") }]);
    expect(band?.label).toBe("killed Mar 15, 14:05 UTC to Mar 15, 14:50 UTC");
  });
});

describe("killedOn and dailyRows", () => {
  const kills = [{ start: ms("2025-03-15T14:00:00Z"), end: ms("2025-03-16T00:00:00Z") }];
  it("marks only days that overlap a kill", () => {
    expect(DAYS.map((d) => killedOn(d, kills))).toEqual([false, true, false, false, false]);
  });

  it("converts spend and the ceiling to money with the unit price", () => {
    const days = [day("2025-03-15", 30, 80), day("2025-03-16", 0, null)];
    expect(dailyRows(days, kills, "units", 400).map((r) => [r.spend, r.ceiling, r.killed])).toEqual([
      [30, 80, true],
      [0, null, false],
    ]);
    expect(dailyRows(days, kills, "money", 400_000_000).map((r) => [r.spend, r.ceiling])).toEqual([
      [12_000, 32_000],
      [0, null],
    ]);
    // $2.50 per 1M tokens: a ceiling of 3 tokens is 7.5 micros, shown as 8 (never less than it may cost).
    expect(dailyRows([day("2025-03-15", 0, 3)], [], "money", 2_500_000)[0]?.ceiling).toBe(8);
  });
});

describe("summaries", () => {
  it("says the range, totals, busiest day, ceiling changes and kills", () => {
    // The 15th was killed and restored within the day: logged changes, but the same value at its end.
    const days = [day("2025-03-14", 80, 80), day("2025-03-15", 30, 80, 2, 80), day("2025-03-16", 40, 120, 1, 80)];
    const text = dailySummary({ days, kills: [{ start: 0, end: 1 }], unit: "emails", currency: "USD", totalUnits: 150, totalMoneyMicros: 60_000 });
    expect(text).toBe(
      "3 days from Mar 14 to Mar 16 (UTC): 150 emails, $0.06. Busiest day Mar 14 with 80 emails. Daily ceiling now 120 emails, changed on 1 day. Killed 1 time in this range.",
    );
  });

  it("summarises a sparkline, and an empty one", () => {
    const points = [
      { day: "2025-03-19", units: 8, moneyMicros: 63_200 },
      { day: "2025-03-20", units: 2, moneyMicros: 15_800 },
    ];
    expect(sparklineSummary(points, "messages", "USD", 10, 79_000)).toBe(
      "Last 2 days: 10 messages ($0.08); busiest Mar 19 with 8 messages; today so far 2 messages.",
    );
    expect(sparklineSummary([], "messages", "USD", 0, 0)).toBe("No spend history.");
  });

  it("says money of an endpoint with several priced parts is at most", () => {
    const points = [
      { day: "2025-03-19", units: 0, moneyMicros: 0 },
      { day: "2025-03-20", units: 1_000_000, moneyMicros: 10_000_000 },
    ];
    expect(sparklineSummary(points, "tokens", "USD", 1_000_000, 10_000_000, true)).toBe(
      "Last 2 days: 1,000,000 tokens (at most $10.00); busiest Mar 20 with 1,000,000 tokens; today so far 1,000,000 tokens.",
    );
    const days = [day("2025-03-20", 1_000_000, null)];
    expect(
      dailySummary({ days, kills: [], unit: "tokens", currency: "USD", totalUnits: 1_000_000, totalMoneyMicros: 10_000_000, moneyAtMost: true }),
    ).toContain("1,000,000 tokens, at most $10.00.");
    expect(moneyText(10_000_000, "USD", false)).toBe("$10.00");
  });

  it("says the projection is a straight line and flags one above the allowance", () => {
    const m: MonthToDateSpend = {
      endpointId: 1,
      unit: "emails",
      pricePico: 400_000_000,
      moneyAtMost: false,
      currency: "USD",
      billingDay: 15,
      source: "global",
      start: "2025-03-15",
      end: "2025-04-15",
      allowance: 500,
      allowanceMicros: 200_000,
      spentUnits: 100,
      spentMicros: 40_000,
      averageDailyUnits: 18,
      projectedUnits: 564,
      projectedMicros: 225_600,
      days: [
        {
          day: "2025-04-14",
          cumulativeUnits: null,
          cumulativeMicros: null,
          paceUnits: 500,
          paceMicros: 200_000,
          projectedUnits: 564,
          projectedMicros: 225_600,
        },
      ],
    };
    expect(monthSummary(m)).toBe(
      "Billing month Mar 15 to Apr 14 (UTC, from day 15): 100 emails ($0.04) so far of a 500 emails plan allowance. At the average so far (18 emails a day) the month ends near 564 emails ($0.23), above the allowance.",
    );
  });
});
