import { describe, expect, it } from "vitest";
import { failClosedAnswer, reservedAnswer, secondCapAnswer, settledAnswer, toldAnswer, worstColor, type ReservedFacts } from "./readiness-answers";

const T = { basisPoints: 200, micros: 1_000_000 };
const facts = (billed: number, charged: number, over: Partial<ReservedFacts> = {}): ReservedFacts => ({
  mapped: true,
  days: 7,
  billed: { units: billed, micros: billed * 10_000 },
  charged: { units: charged, micros: charged * 10_000 },
  threshold: T,
  currency: "USD",
  ...over,
});

describe("reserved before spending", () => {
  it("green within the threshold", () => {
    expect(reservedAnswer(facts(1000, 980))).toMatchObject({ color: "green", figure: "98.0 %" });
    expect(reservedAnswer(facts(1000, 1000))).toMatchObject({ color: "green", figure: "100.0 %" });
    expect(reservedAnswer(facts(0, 0)).color).toBe("green");
  });

  it("red when billed more than charged past the threshold (the e2e's 90 %)", () => {
    const a = reservedAnswer(facts(1000, 900));
    expect(a).toMatchObject({ color: "red", figure: "90.0 %" });
    expect(a.detail).toContain("calls bypass Ceilings or settle low");
    expect(a.detail).toContain("$1.00 (+10.0 %)");
  });

  it("amber when charged more than billed past the threshold", () => {
    const a = reservedAnswer(facts(900, 1000));
    expect(a.color).toBe("amber");
    expect(a.detail).toContain("settles overstate");
  });

  it("green when short of 98 % but within the threshold, as the docs' table says", () => {
    // 10 units short is 10 cents: under the $1.00 threshold, so within it.
    const a = reservedAnswer(facts(100, 90));
    expect(a).toMatchObject({ color: "green", figure: "90.0 %" });
    expect(a.detail).toBe("Ceilings charged 90.0 % of what the provider billed over 7 compared days of the last 7, within the source's threshold.");
    expect(reservedAnswer(facts(1000, 979)).color).toBe("green");
    expect(reservedAnswer(facts(0, 1)).color).toBe("green");
  });

  it("amber 'not reconciled' when no source maps it or no day is compared yet", () => {
    expect(reservedAnswer(facts(0, 0, { mapped: false, days: 0, threshold: null }))).toMatchObject({ color: "amber", figure: "not reconciled" });
    const waiting = reservedAnswer(facts(0, 0, { mapped: true, days: 0, threshold: null }));
    expect(waiting).toMatchObject({ color: "amber", figure: "not reconciled" });
    expect(waiting.detail).toMatch(/^No final day yet/);
  });

  it("compares units when neither side has money", () => {
    expect(reservedAnswer({ ...facts(0, 0), billed: { units: 1000, micros: 0 }, charged: { units: 900, micros: 0 } })).toMatchObject({
      color: "red",
      figure: "90.0 %",
    });
  });
});

describe("settle discipline", () => {
  it("green at 99 %, amber at 95 %, red below", () => {
    expect(settledAnswer({ settled: 990, released: 0, expired: 10, held: 0 })).toMatchObject({ color: "green", figure: "10 expired of 1,000" });
    expect(settledAnswer({ settled: 900, released: 50, expired: 50, held: 0 }).color).toBe("amber");
    expect(settledAnswer({ settled: 900, released: 49, expired: 51, held: 0 }).color).toBe("red");
  });

  it("says 'as of' when the worker's counts are older than one of its runs", () => {
    expect(settledAnswer({ settled: 990, released: 0, expired: 10, held: 0 }, "14:20 UTC")).toMatchObject({
      color: "green",
      figure: "10 expired of 1,000 as of 14:20 UTC",
    });
    expect(settledAnswer({ settled: 0, released: 0, expired: 0, held: 0 }, "14:20 UTC").figure).toBe("no reservations as of 14:20 UTC");
  });

  it("amber 'no reservations' when none resolved", () => {
    expect(settledAnswer({ settled: 0, released: 0, expired: 0, held: 3 })).toMatchObject({ color: "amber", figure: "no reservations" });
  });
});

describe("fail-closed health", () => {
  it("green at 0, amber 1 to 99, red at 100", () => {
    expect(failClosedAnswer(0)).toMatchObject({ color: "green", figure: "0 unavailable refusals in 7 days" });
    expect(failClosedAnswer(1)).toMatchObject({ color: "amber", figure: "1 unavailable refusal in 7 days" });
    expect(failClosedAnswer(99).color).toBe("amber");
    expect(failClosedAnswer(100)).toMatchObject({ color: "red", figure: "100 unavailable refusals in 7 days" });
  });
});

describe("second cap", () => {
  it("green above, amber below or unbounded, red missing", () => {
    expect(secondCapAnswer({ state: "above", capText: "$50.00 a month", worstText: "$37.20 a month" })).toMatchObject({
      color: "green",
      figure: "$50.00 a month",
    });
    expect(secondCapAnswer({ state: "below", capText: "$5.00 a month", worstText: "$37.20 a month" }).color).toBe("amber");
    expect(secondCapAnswer({ state: "unbounded", capText: "$5.00 a day" }).color).toBe("amber");
    expect(secondCapAnswer({ state: "missing" })).toMatchObject({ color: "red", figure: "none recorded" });
  });
});

describe("someone told", () => {
  it("red without an enabled destination, amber when the latest failed or none delivered, green when it got through", () => {
    expect(toldAnswer({ enabledDestinations: 0, latest: null }).color).toBe("red");
    expect(toldAnswer({ enabledDestinations: 2, latest: null }).color).toBe("amber");
    expect(toldAnswer({ enabledDestinations: 2, latest: "failed" }).color).toBe("amber");
    expect(toldAnswer({ enabledDestinations: 1, latest: "delivered" })).toMatchObject({ color: "green", figure: "1 enabled destination" });
  });
});

describe("overall", () => {
  it("is the worst of the five", () => {
    expect(worstColor(["green", "green"])).toBe("green");
    expect(worstColor(["green", "amber", "green"])).toBe("amber");
    expect(worstColor(["amber", "red", "green"])).toBe("red");
  });
});
