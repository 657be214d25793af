import { InputError } from "@/lib/errors";
import { describe, expect, it } from "vitest";
import { costOfBatch } from "./cost";

const codes = (n: number) => Array.from({ length: n }, (_, i) => `9921${i}`);

describe("costOfBatch: a bulk call costs its items", () => {
  it("charges a 300-code call what 300 single calls cost", () => {
    const bulk = costOfBatch(codes(300), { perCallMax: 500 });
    const singles = codes(300).reduce((sum, code) => sum + costOfBatch([code], { perCallMax: 500 }).units, 0);
    expect(bulk).toEqual({ units: 300, fits: 300, items: 300, totalUnits: 300, clamped: false, perCallMax: 500 });
    expect(bulk.units).toBe(singles);
  });

  it.each([
    // [items, perCallMax, units, fits, clamped]
    [1, 1, 1, 1, false],
    [300, 300, 300, 300, false],
    [301, 300, 300, 300, true],
    [1000, 250, 250, 250, true],
    [5, 3, 3, 3, true],
  ])("%i items at a per-call max of %i cost %i units, %i fit", (n, perCallMax, units, fits, clamped) => {
    expect(costOfBatch(codes(n), { perCallMax })).toMatchObject({ units, fits, items: n, totalUnits: n, clamped });
  });

  it("charges an empty call one unit: the call itself is work", () => {
    expect(costOfBatch([], { perCallMax: 10 })).toEqual({ units: 1, fits: 0, items: 0, totalUnits: 0, clamped: false, perCallMax: 10 });
  });

  it("weighs items and fits a prefix in the order sent", () => {
    const lines = [{ w: 4 }, { w: 3 }, { w: 5 }, { w: 1 }];
    const cost = costOfBatch(lines, { perCallMax: 10, weight: (line) => line.w });
    // 4 + 3 = 7 fits; 5 would make 12; the 1 after it is not squeezed in out of order.
    expect(cost).toEqual({ units: 7, fits: 2, items: 4, totalUnits: 13, clamped: true, perCallMax: 10 });
  });

  it("fits nothing, at 0 units, when the first item alone is over the per-call max", () => {
    expect(costOfBatch([{ w: 11 }, { w: 1 }], { perCallMax: 10, weight: (l) => l.w })).toMatchObject({ units: 0, fits: 0, clamped: true, totalUnits: 12 });
  });

  it("never charges more than the per-call max, whatever the weights", () => {
    for (let max = 1; max <= 40; max++) {
      const cost = costOfBatch(codes(25), { perCallMax: max, weight: (_, i) => (i % 4) + 1 });
      expect(cost.units).toBeLessThanOrEqual(max);
      expect(cost.units).toBe(Array.from({ length: cost.fits }, (_, i) => (i % 4) + 1).reduce((a, b) => a + b, 0));
    }
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 60])("refuses a weight of %s", (w) => {
    expect(() => costOfBatch(["a"], { perCallMax: 10, weight: () => w })).toThrow(InputError);
  });

  it.each([0, -5, 2.5, Number.POSITIVE_INFINITY])("refuses a per-call max of %s", (perCallMax) => {
    expect(() => costOfBatch(["a"], { perCallMax })).toThrow(/perCallMax must be a whole number/);
  });

  it("refuses a total that cannot be counted exactly", () => {
    const huge = Number.MAX_SAFE_INTEGER - 1;
    expect(() => costOfBatch(["a", "b"], { perCallMax: 10, weight: () => huge })).toThrow(/more units than can be counted/);
  });
});
