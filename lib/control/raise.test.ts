import { describe, expect, it } from "vitest";
import { isBillingDayRaise } from "@/lib/catalog/billing-day";
import { isBoundsRaise, isNewValueRaise, isValueRaise, loweredPrices } from "./raise";

describe("what counts as a raise", () => {
  it("a value above the one in force; on a killed one, above what a restore puts back", () => {
    const live = { value: 100, valueBeforeKill: null, defaultValue: 50 };
    expect([isValueRaise(live, 101), isValueRaise(live, 100), isValueRaise(live, 10), isValueRaise(live, 0)]).toEqual([true, false, false, false]);
    const killed = { value: 0, valueBeforeKill: 100, defaultValue: 50 };
    expect([isValueRaise(killed, 100), isValueRaise(killed, 60), isValueRaise(killed, 101)]).toEqual([false, false, true]);
    // Killed with nothing remembered: a restore puts back the default.
    const bare = { value: 0, valueBeforeKill: null, defaultValue: 50 };
    expect([isValueRaise(bare, 50), isValueRaise(bare, 51)]).toEqual([false, true]);
  });

  it("bounds: a higher max, or a min that pulls the value or the restore value up", () => {
    const c = { maxValue: 150, value: 100, valueBeforeKill: null };
    expect(isBoundsRaise(c, { max: 200, value: 100, valueBeforeKill: null })).toBe(true);
    expect(isBoundsRaise(c, { max: 120, value: 100, valueBeforeKill: null })).toBe(false);
    expect(isBoundsRaise(c, { max: 150, value: 110, valueBeforeKill: null })).toBe(true);
    expect(isBoundsRaise({ maxValue: 150, value: 0, valueBeforeKill: 40 }, { max: 150, value: 0, valueBeforeKill: 60 })).toBe(true);
  });

  it("bounds during a temporary raise: a min raised above the value its end puts back is a raise", () => {
    // 100 → 150 running (revert_to 100): min 150 leaves the value at 150, but the end could not put 100 back.
    const running = { maxValue: 1000, minValue: 0, value: 150, valueBeforeKill: null, revertTo: 100 };
    expect(isBoundsRaise(running, { max: 1000, min: 150, value: 150, valueBeforeKill: null })).toBe(true);
    expect(isBoundsRaise(running, { max: 1000, min: 100, value: 150, valueBeforeKill: null })).toBe(false);
    // A min already above it (a decision by two people) is not raised again by keeping it.
    expect(isBoundsRaise({ ...running, minValue: 120 }, { max: 900, min: 120, value: 150, valueBeforeKill: null })).toBe(false);
    expect(isBoundsRaise({ ...running, revertTo: null }, { max: 1000, min: 150, value: 150, valueBeforeKill: null })).toBe(false);
  });

  it("a new ceiling or budget above its default", () => {
    expect([isNewValueRaise({ value: 10, default: 10 }), isNewValueRaise({ value: 11, default: 10 }), isNewValueRaise({ value: 0, default: 10 })]).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("prices lowered: a kept part cheaper, a new part below every part in force or below a part removed (by this edit or in the last 24 hours)", () => {
    const A = { name: "a", pricePico: 10 };
    const B = { name: "b", pricePico: 5 };
    expect(loweredPrices([A, B], [{ ...A, pricePico: 9 }, B])).toHaveLength(1);
    expect(loweredPrices([A, B], [{ ...A, pricePico: 11 }, B])).toEqual([]);
    expect(loweredPrices([A, B], [A, B, { name: "c", pricePico: 4 }])).toHaveLength(1);
    expect(loweredPrices([A, B], [A, B, { name: "c", pricePico: 5 }])).toEqual([]);
    // a removed earlier, added back at 5: not below b, but below what a was.
    expect(loweredPrices([B], [B, { name: "a", pricePico: 5 }], [A])).toEqual([
      "new part a at 5 picos a unit, below part a (10) removed by this change or in the last 24 hours",
    ]);
    expect(loweredPrices([B], [B, { name: "a", pricePico: 10 }], [A])).toEqual([]);
    // Renamed cheaper in one edit: a leaves, c comes at 7.
    expect(loweredPrices([A, B], [B, { name: "c", pricePico: 7 }])).toHaveLength(1);
    // Removing alone lowers nothing.
    expect(loweredPrices([A, B], [B], [A])).toEqual([]);
  });

  it("a new billing day is a raise only with a billing_month ceiling", () => {
    const month = [{ window: "utc_day" as const }, { window: "billing_month" as const }];
    expect([isBillingDayRaise(month, 1, 2), isBillingDayRaise(month, 1, 1), isBillingDayRaise([{ window: "utc_day" }], 1, 2)]).toEqual([true, false, false]);
  });
});
