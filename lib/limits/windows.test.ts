import { InputError } from "@/lib/errors";
import { describe, expect, it } from "vitest";
import { billingMonthWindow, windowFor } from "@/lib/limits/windows";

const iso = (s: { start: Date; end: Date }) => [s.start.toISOString(), s.end.toISOString()];

describe("utc_day", () => {
  it("runs from UTC midnight to the next UTC midnight", () => {
    expect(iso(windowFor("utc_day", {}, new Date("2025-03-10T17:45:12.345Z")))).toEqual(["2025-03-10T00:00:00.000Z", "2025-03-11T00:00:00.000Z"]);
  });

  it("puts midnight itself in the day it starts, and the last millisecond in the day before", () => {
    expect(iso(windowFor("utc_day", {}, new Date("2025-03-11T00:00:00.000Z")))[0]).toBe("2025-03-11T00:00:00.000Z");
    expect(iso(windowFor("utc_day", {}, new Date("2025-03-10T23:59:59.999Z")))[0]).toBe("2025-03-10T00:00:00.000Z");
  });

  it("ignores the local time zone: a +14:00 offset instant still maps to its UTC day", () => {
    expect(iso(windowFor("utc_day", {}, new Date("2025-01-01T08:00:00+14:00")))[0]).toBe("2024-12-31T00:00:00.000Z");
  });

  it("crosses the year end", () => {
    expect(iso(windowFor("utc_day", {}, new Date("2024-12-31T23:00:00Z")))[1]).toBe("2025-01-01T00:00:00.000Z");
  });
});

describe("billing_month", () => {
  it("with billing day 1 is the calendar month", () => {
    expect(iso(windowFor("billing_month", { billingDay: 1 }, new Date("2025-02-14T12:00:00Z")))).toEqual([
      "2025-02-01T00:00:00.000Z",
      "2025-03-01T00:00:00.000Z",
    ]);
  });

  it("defaults to billing day 1", () => {
    expect(iso(windowFor("billing_month", {}, new Date("2025-02-14T12:00:00Z")))[0]).toBe("2025-02-01T00:00:00.000Z");
  });

  it("starts on the billing day: on and after it, this month; before it, the previous month", () => {
    const p = { billingDay: 15 };
    expect(iso(windowFor("billing_month", p, new Date("2025-05-15T00:00:00Z")))).toEqual(["2025-05-15T00:00:00.000Z", "2025-06-15T00:00:00.000Z"]);
    expect(iso(windowFor("billing_month", p, new Date("2025-05-14T23:59:59.999Z")))).toEqual(["2025-04-15T00:00:00.000Z", "2025-05-15T00:00:00.000Z"]);
  });

  it("rolls back across the year end", () => {
    expect(iso(billingMonthWindow(new Date("2025-01-03T00:00:00Z"), 10))).toEqual(["2024-12-10T00:00:00.000Z", "2025-01-10T00:00:00.000Z"]);
  });

  it("rolls forward across the year end", () => {
    expect(iso(billingMonthWindow(new Date("2024-12-20T00:00:00Z"), 10))[1]).toBe("2025-01-10T00:00:00.000Z");
  });

  it("handles February with billing day 28 in leap and common years", () => {
    expect(iso(billingMonthWindow(new Date("2024-02-29T10:00:00Z"), 28))).toEqual(["2024-02-28T00:00:00.000Z", "2024-03-28T00:00:00.000Z"]);
    expect(iso(billingMonthWindow(new Date("2025-03-01T10:00:00Z"), 28))).toEqual(["2025-02-28T00:00:00.000Z", "2025-03-28T00:00:00.000Z"]);
  });

  it("refuses billing days outside 1..28 and fractions", () => {
    for (const day of [0, 29, 31, -1, 1.5, Number.NaN]) {
      expect(() => billingMonthWindow(new Date("2025-01-01T00:00:00Z"), day)).toThrow(InputError);
    }
  });
});

describe("first_hit", () => {
  it("starts at the hit itself, not at midnight, and lasts windowSeconds", () => {
    expect(iso(windowFor("first_hit", { windowSeconds: 86_400 }, new Date("2025-03-10T17:45:12.345Z")))).toEqual([
      "2025-03-10T17:45:12.345Z",
      "2025-03-11T17:45:12.345Z",
    ]);
  });

  it("refuses a missing, zero, negative or fractional length", () => {
    const at = new Date("2025-03-10T00:00:00Z");
    expect(() => windowFor("first_hit", {}, at)).toThrow(InputError);
    expect(() => windowFor("first_hit", { windowSeconds: null }, at)).toThrow(InputError);
    for (const s of [0, -60, 1.5]) expect(() => windowFor("first_hit", { windowSeconds: s }, at)).toThrow(InputError);
  });
});

it("refuses an invalid date rather than computing a NaN window", () => {
  expect(() => windowFor("utc_day", {}, new Date("not a date"))).toThrow(InputError);
});
