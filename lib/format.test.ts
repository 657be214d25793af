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
  formatMoneyParts,
  formatMoneyText,
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

describe("money as the dashboard shows it", () => {
  const text = (micros: number | bigint, currency?: string) => formatMoneyParts(micros, currency).text;
  const exact = (micros: number | bigint, currency?: string) => formatMoneyParts(micros, currency).exact;

  it("shows 0 as $0.00 and says so when an amount that is not 0 rounds to nothing", () => {
    expect(formatMoneyParts(0)).toEqual({ text: "$0.00", exact: "$0.000000", value: "0.000000", rounded: false });
    expect(formatMoneyParts(1)).toEqual({ text: "< $0.01", exact: "$0.000001", value: "0.000001", rounded: true });
    expect(text(4_999)).toBe("< $0.01");
    expect(exact(4_999)).toBe("$0.004999");
  });

  it("rounds to cents half away from zero", () => {
    expect(formatMoneyParts(5_000)).toEqual({ text: "$0.01", exact: "$0.005000", value: "0.005000", rounded: true });
    expect(formatMoneyParts(956_109)).toEqual({ text: "$0.96", exact: "$0.956109", value: "0.956109", rounded: true });
    expect(text(1_994_999)).toBe("$1.99");
    expect(formatMoneyParts(1_200_000)).toMatchObject({ text: "$1.20", rounded: false });
  });

  it("keeps the sign, and says a small negative is above minus one cent", () => {
    expect(formatMoneyParts(-956_109)).toEqual({ text: "-$0.96", exact: "-$0.956109", value: "-0.956109", rounded: true });
    expect(text(-5_000)).toBe("-$0.01");
    expect(text(-4_999)).toBe("> -$0.01");
    expect(exact(-1)).toBe("-$0.000001");
  });

  it("keeps every digit of a huge amount, beyond what a float division keeps", () => {
    expect(formatMoneyParts(9e15)).toEqual({ text: "$9,000,000,000.00", exact: "$9,000,000,000.000000", value: "9000000000.000000", rounded: false });
    // 2^53 + 1 micros: a float cannot hold it, the exact text still ends in ...993.
    expect(exact(9_007_199_254_740_993n)).toBe("$9,007,199,254.740993");
    expect(text(9_007_199_254_740_993n)).toBe("$9,007,199,254.74");
    expect(formatMoneyParts(123_456_789_012_345_678_901n).value).toBe("123456789012345.678901");
  });

  it("uses the currency's own minor digits", () => {
    expect(formatMoneyParts(1_500_000, "JPY")).toEqual({ text: "¥2", exact: "¥1.500000", value: "1.500000", rounded: true });
    expect(text(12_345_000_000, "JPY")).toBe("¥12,345");
    expect(text(400_000, "JPY")).toBe("< ¥1");
    expect(text(2_500_000, "EUR")).toBe("€2.50");
    // Three digits for the dinar; Intl puts a no-break space after the code.
    expect(text(1_234_500, "BHD")).toBe("BHD\u00a01.235");
  });

  it("rounds a fraction of a micro (an average) to whole micros", () => {
    expect(exact(2.5)).toBe("$0.000003");
    expect(exact(-2.5)).toBe("-$0.000003");
  });

  it("writes the exact beside the rounded text in a sentence only when rounding hid digits", () => {
    expect(formatMoneyText(2_000_000)).toBe("$2.00");
    expect(formatMoneyText(1_956_109)).toBe("$1.96 (exactly $1.956109)");
    expect(formatMoneyText(8_333)).toBe("$0.01 (exactly $0.008333)");
    expect(formatMoneyText(4_999)).toBe("< $0.01 (exactly $0.004999)");
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
