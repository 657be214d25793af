import { describe, expect, it } from "vitest";
import {
  formatAge,
  formatAgo,
  formatAmount,
  formatCompact,
  formatCount,
  formatDateTime,
  formatDay,
  formatInstant,
  formatMoney,
  formatMoneyCompact,
  formatPercent,
  formatUnits,
  formatUtc,
} from "./format";

describe("numbers", () => {
  it("groups counts and units in thousands, en-US, whatever the viewer's locale", () => {
    expect(formatCount(3000)).toBe("3,000");
    expect(formatCount(Number.MAX_SAFE_INTEGER)).toBe("9,007,199,254,740,991");
    expect(formatUnits(30_000_000, "tokens")).toBe("30,000,000 tokens");
    expect(formatUnits(1234.6)).toBe("1,235");
    expect(formatCompact(1_234_000)).toBe("1.2M");
    expect(formatPercent(0.876)).toBe("88%");
  });
});

describe("money", () => {
  it("formats integer micros as money, keeping fractions of a cent visible", () => {
    expect(formatMoney(1_200_000)).toBe("$1.20");
    expect(formatMoney(40_000)).toBe("$0.04");
    expect(formatMoney(42)).toBe("$0.000042");
    expect(formatMoney(4_200)).toBe("$0.0042");
    expect(formatMoney(0)).toBe("$0.00");
    expect(formatMoney(2_500_000, "EUR")).toBe("€2.50");
    expect(formatMoneyCompact(1_234_000_000)).toBe("$1.2K");
  });

  it("shows an amount in the chosen mode", () => {
    expect(formatAmount(1500, "units", "emails", "USD")).toBe("1,500 emails");
    expect(formatAmount(1_500_000, "money", "emails", "USD")).toBe("$1.50");
  });
});

describe("times", () => {
  it("formats units and UTC days without shifting by the viewer's zone", () => {
    expect(formatDay("2025-03-01")).toBe("Mar 1");
    expect(formatInstant(Date.parse("2025-03-16T00:05:00Z"))).toBe("Mar 16, 00:05 UTC");
    expect(formatUtc(new Date("2025-03-05T14:05:59Z"))).toBe("2025-03-05 14:05 UTC");
    expect(formatDateTime(new Date("2025-03-05T14:05:09Z"))).toBe("5 Mar 2025, 14:05");
    expect(formatDateTime(new Date("2025-03-05T14:05:09Z"), { seconds: true })).toBe("5 Mar 2025, 14:05:09");
  });

  it("says how long ago in words", () => {
    const now = new Date("2025-03-05T12:00:00Z");
    const before = (s: number) => new Date(now.getTime() - s * 1000);
    expect(formatAgo(before(30), now)).toBe("just now");
    expect(formatAgo(before(12 * 60), now)).toBe("12 min ago");
    expect(formatAgo(before(3 * 3600), now)).toBe("3 h ago");
    expect(formatAgo(before(3 * 86_400), now)).toBe("3 days ago");
    expect(formatAge(45)).toBe("45 s");
    expect(formatAge(12 * 60)).toBe("12 min");
    expect(formatAge(3 * 3600)).toBe("3 h");
    expect(formatAge(2 * 86_400)).toBe("2 days");
  });
});
