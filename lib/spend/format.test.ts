import { describe, expect, it } from "vitest";
import { formatDay, formatInstant, formatMoney, formatMoneyCompact, formatUnits } from "./format";

describe("spend formatting", () => {
  it("formats integer micros as money, keeping fractions of a cent visible", () => {
    expect(formatMoney(1_200_000)).toBe("$1.20");
    expect(formatMoney(40_000)).toBe("$0.04");
    expect(formatMoney(42)).toBe("$0.000042");
    expect(formatMoney(4_200)).toBe("$0.0042");
    expect(formatMoney(0)).toBe("$0.00");
    expect(formatMoney(2_500_000, "EUR")).toBe("€2.50");
    expect(formatMoneyCompact(1_234_000_000)).toBe("$1.2K");
  });

  it("formats units and UTC days without shifting by the viewer's zone", () => {
    expect(formatUnits(30_000_000, "tokens")).toBe("30,000,000 tokens");
    expect(formatDay("2025-03-01")).toBe("Mar 1");
    expect(formatInstant(Date.parse("2025-03-16T00:05:00Z"))).toBe("Mar 16, 00:05 UTC");
  });
});
