import { describe, expect, it } from "vitest";
import { calendarTextIsReal, nextAtTimeOfDay, nextDailyRun, parseTimeOfDay } from "./schedule-time";

describe("a schedule's time of day", () => {
  it("is HH:MM on a 24-hour clock, two digits each", () => {
    expect(parseTimeOfDay("22:00")).toMatchObject({ ok: true, time: { hour: 22, minute: 0 } });
    expect(parseTimeOfDay(" 09:05 ")).toMatchObject({ ok: true, time: { hour: 9, minute: 5 }, text: "09:05" });
    expect(parseTimeOfDay("00:00")).toMatchObject({ ok: true });
    expect(parseTimeOfDay("23:59")).toMatchObject({ ok: true });
  });

  it("refuses what a clock does not show, each with a clear error", () => {
    expect(parseTimeOfDay("25:00")).toEqual({ ok: false, error: "the hour must be 00 to 23, got '25:00'" });
    expect(parseTimeOfDay("24:00")).toEqual({ ok: false, error: "the hour must be 00 to 23, got '24:00'" });
    expect(parseTimeOfDay("12:60")).toEqual({ ok: false, error: "the minutes must be 00 to 59, got '12:60'" });
    for (const bad of ["9:5", "9:05", "0905", "09:05:00", "9am", "-1:00", "١٢:٠٠"]) {
      expect(parseTimeOfDay(bad)).toMatchObject({ ok: false, error: expect.stringContaining("HH:MM") });
    }
    expect(parseTimeOfDay("")).toMatchObject({ ok: false, error: expect.stringContaining("required") });
  });

  it("first runs at its next time strictly after now", () => {
    const now = new Date("2026-03-01T21:59:30Z");
    expect(nextAtTimeOfDay({ hour: 22, minute: 0 }, now).toISOString()).toBe("2026-03-01T22:00:00.000Z");
    expect(nextAtTimeOfDay({ hour: 21, minute: 59 }, now).toISOString()).toBe("2026-03-02T21:59:00.000Z");
    expect(nextAtTimeOfDay({ hour: 22, minute: 0 }, new Date("2026-03-01T22:00:00Z")).toISOString()).toBe("2026-03-02T22:00:00.000Z");
  });

  it("moves a daily run a day on, skipping days missed while no worker ran", () => {
    const runAt = new Date("2026-03-01T22:00:00Z");
    expect(nextDailyRun(runAt, new Date("2026-03-01T22:00:01Z")).toISOString()).toBe("2026-03-02T22:00:00.000Z");
    expect(nextDailyRun(runAt, new Date("2026-03-04T23:00:00Z")).toISOString()).toBe("2026-03-05T22:00:00.000Z");
    expect(nextDailyRun(runAt, new Date("2026-03-04T22:00:00Z")).toISOString()).toBe("2026-03-05T22:00:00.000Z");
    expect(nextDailyRun(runAt, new Date("2026-03-04T21:59:59Z")).toISOString()).toBe("2026-03-04T22:00:00.000Z");
  });
});

describe("a date and time typed for a schedule or an end", () => {
  it("is real only if it reads back unchanged: no February 30th, no 24:00", () => {
    expect(calendarTextIsReal("2026-12-02T22:00")).toBe(true);
    expect(calendarTextIsReal("2028-02-29T10:00:00Z")).toBe(true);
    expect(calendarTextIsReal("2027-02-29T10:00")).toBe(false);
    expect(calendarTextIsReal("2027-02-30T10:00")).toBe(false);
    expect(calendarTextIsReal("2026-12-31T24:00")).toBe(false);
    expect(calendarTextIsReal("2026-13-01T10:00")).toBe(false);
    expect(calendarTextIsReal("2026-12-02T10:00:60Z")).toBe(false);
    expect(calendarTextIsReal("tomorrow")).toBeNull();
  });
});
