import { describe, expect, it } from "vitest";
import { billedOf } from "./billed";
import { driftOf } from "./drift";

const T = { basisPoints: 200, micros: 1_000_000 };

describe("driftOf", () => {
  it("0 billed and 0 charged is even, 0 %, not over", () => {
    expect(driftOf({ units: 0, micros: 0 }, { units: 0, micros: 0 }, T)).toEqual({ diffUnits: 0, diffMicros: 0, percent: 0, over: false, direction: "even" });
  });

  it("nothing billed but something charged is −100 %: settles overstate", () => {
    const d = driftOf({ units: 0, micros: 0 }, { units: 900, micros: 9_000_000 }, T);
    expect(d).toMatchObject({ diffUnits: -900, diffMicros: -9_000_000, percent: -100, over: true, direction: "charged_more" });
  });

  it("billed with nothing charged is +100 %", () => {
    const d = driftOf({ units: 1000, micros: 10_000_000 }, { units: 0, micros: 0 }, T);
    expect(d).toMatchObject({ percent: 100, over: true, direction: "billed_more" });
  });

  it("billed 1,000 and charged 900 is +10 %, in money", () => {
    const d = driftOf({ units: 1000, micros: 10_000_000 }, { units: 900, micros: 9_000_000 }, T);
    expect(d.percent).toBeCloseTo(10, 10);
    expect(d).toMatchObject({ diffUnits: 100, diffMicros: 1_000_000, over: true, direction: "billed_more" });
  });

  it("a day exactly at both thresholds is over; a micro less is not", () => {
    // 2 % of $10 is $0.20; the money threshold is set to the same $0.20.
    const t = { basisPoints: 200, micros: 200_000 };
    expect(driftOf({ units: 0, micros: 10_000_000 }, { units: 0, micros: 9_800_000 }, t).over).toBe(true);
    expect(driftOf({ units: 0, micros: 10_000_000 }, { units: 0, micros: 9_800_001 }, t).over).toBe(false);
    expect(driftOf({ units: 0, micros: 9_800_000 }, { units: 0, micros: 10_000_000 }, t)).toMatchObject({ over: true, direction: "charged_more" });
  });

  it("a large share under the money threshold is not over", () => {
    const d = driftOf({ units: 10, micros: 100_000 }, { units: 5, micros: 50_000 }, T);
    expect(d.percent).toBe(50);
    expect(d.over).toBe(false);
  });

  it("counts alone (free parts) compare in units, the money threshold waived", () => {
    const d = driftOf({ units: 1000, micros: 0 }, { units: 900, micros: 0 }, T);
    expect(d).toMatchObject({ diffUnits: 100, diffMicros: 0, percent: 10, over: true, direction: "billed_more" });
    expect(driftOf({ units: 1000, micros: 0 }, { units: 990, micros: 0 }, T).over).toBe(false);
  });

  it("a threshold of 0 % and $0 still calls agreement even", () => {
    expect(driftOf({ units: 5, micros: 5 }, { units: 5, micros: 5 }, { basisPoints: 0, micros: 0 }).over).toBe(false);
    expect(driftOf({ units: 5, micros: 6 }, { units: 5, micros: 5 }, { basisPoints: 0, micros: 0 }).over).toBe(true);
  });

  it("compares large amounts exactly (past 2^53 once multiplied by 10,000)", () => {
    const billed = 9_000_000_000_000_000;
    const d = driftOf({ units: 0, micros: billed }, { units: 0, micros: billed - 180_000_000_000_000 }, T);
    expect(d.over).toBe(true);
    expect(driftOf({ units: 0, micros: billed }, { units: 0, micros: billed - 179_999_999_999_999 }, T).over).toBe(false);
  });
});

describe("billedOf", () => {
  const parts = [
    { name: "input", pricePico: 2_500_000 },
    { name: "output", pricePico: 10_000_000 },
  ];

  it("prices counts at the rule's part, rounded up per row; the first part when none", () => {
    expect(billedOf([{ units: 1_000_000, costMicros: null, part: "output" }], parts)).toEqual({ units: 1_000_000, micros: 10_000_000, money: "priced" });
    expect(billedOf([{ units: 1, costMicros: null, part: null }], parts)).toEqual({ units: 1, micros: 3, money: "priced" });
    expect(billedOf([{ units: 3, costMicros: null, part: "gone" }], parts)).toEqual({ units: 3, micros: 8, money: "priced" });
  });

  it("is 'reported' when any row carries the provider's money, and then count-only rows add units, never money", () => {
    // OpenAI's usage row (tokens) and costs row (money) of one model, mapped by one rule: the money
    // is the provider's, and pricing the tokens too would bill the day twice.
    const b = billedOf(
      [
        { units: 0, costMicros: 5_000_000, part: null },
        { units: 1_000_000, costMicros: null, part: "input" },
      ],
      parts,
    );
    expect(b).toEqual({ units: 1_000_000, micros: 5_000_000, money: "reported" });
  });

  it("a budget's count-only rows add units and no money", () => {
    expect(billedOf([{ units: 40, costMicros: null, part: null }], null)).toEqual({ units: 40, micros: 0, money: "priced" });
  });

  it("no rows: the provider reported zero", () => {
    expect(billedOf([], parts)).toEqual({ units: 0, micros: 0, money: "priced" });
  });
});
