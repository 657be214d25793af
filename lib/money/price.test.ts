import { describe, expect, it } from "vitest";
import { MAX_PRICE_PICO } from "@/lib/vocabulary";
import {
  dearestPrice,
  describeParts,
  describePrice,
  formatPrice,
  formatPriceDecimal,
  formatPricePerMillion,
  microsOfUnits,
  moneyOf,
  parsePrice,
} from "./price";

describe("parsePrice", () => {
  it.each([
    ["0", 0],
    ["0.0000025", 2_500_000],
    ["0.0079", 7_900_000_000],
    [" 0.02 ", 20_000_000_000],
    ["0.000000000001", 1],
    ["0.00000250000", 2_500_000],
    ["1000", MAX_PRICE_PICO],
    ["1000.000000000000", MAX_PRICE_PICO],
    ["007.5", 7_500_000_000_000],
  ])("reads %s as %d picos", (text, pico) => {
    expect(parsePrice(text)).toEqual({ ok: true, pricePico: pico });
  });

  it.each([
    ["-1", "price must be 0 or more, got '-1'"],
    ["1e9", "price must be a plain decimal of the currency per unit, such as 0.0000025, got '1e9'"],
    ["0.5abc", "got '0.5abc'"],
    ["", "price is required"],
    ["   ", "price is required"],
    [".5", "got '.5'"],
    ["$1", "got '$1'"],
    ["1,5", "got '1,5'"],
    ["0.0000000000001", "at most 12 decimal places"],
    ["1000.000000000001", "at most 1000 a unit"],
    ["1001", "at most 1000 a unit"],
    ["99999999999999999999999", "at most 1000 a unit"],
  ])("refuses %j", (text, message) => {
    const parsed = parsePrice(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(message);
  });

  it("names the field it reads", () => {
    expect(parsePrice("x", "parts[1].price")).toMatchObject({ ok: false, error: expect.stringMatching(/^parts\[1\]\.price must be/) });
  });

  it("round-trips through the canonical decimal", () => {
    for (const pico of [0, 1, 2_500_000, 7_900_000_000, 10_000_000_000_000, MAX_PRICE_PICO, 123_456_789_012_345]) {
      expect(parsePrice(formatPriceDecimal(pico))).toEqual({ ok: true, pricePico: pico });
    }
    expect(formatPriceDecimal(2_500_000)).toBe("0.0000025");
    expect(formatPriceDecimal(MAX_PRICE_PICO)).toBe("1000");
    expect(formatPriceDecimal(0)).toBe("0");
  });
});

describe("formatting a price", () => {
  it("shows it exactly, per unit and per million", () => {
    expect(formatPrice(2_500_000)).toBe("$0.0000025");
    expect(formatPrice(7_900_000_000)).toBe("$0.0079");
    expect(formatPrice(MAX_PRICE_PICO)).toBe("$1000.00");
    expect(formatPrice(0, "EUR")).toBe("€0.00");
    expect(formatPricePerMillion(2_500_000)).toBe("$2.50 per 1M");
    expect(formatPricePerMillion(2_555_555)).toBe("$2.555555 per 1M");
    expect(formatPricePerMillion(1)).toBe("$0.000001 per 1M");
  });

  it("reads a token's price per million, an SMS's per message", () => {
    expect(describePrice(2_500_000, "USD", "tokens", "token")).toBe("$2.50 per 1M tokens");
    expect(describePrice(20_000, "USD", "tokens", "token")).toBe("$0.02 per 1M tokens");
    expect(describePrice(7_900_000_000, "USD", "messages", "message")).toBe("$0.0079 per message");
    expect(describePrice(0, "USD", "emails", "email")).toBe("$0.00 per email");
  });

  it("says an endpoint's prices, one part or several", () => {
    expect(describeParts([{ name: "units", pricePico: 7_900_000_000 }], "USD", "messages", "message")).toBe("$0.0079 per message");
    expect(
      describeParts(
        [
          { name: "input", pricePico: 2_500_000 },
          { name: "output", pricePico: 10_000_000 },
        ],
        "USD",
        "tokens",
        "token",
      ),
    ).toBe("input $2.50 per 1M tokens, output $10.00 per 1M tokens");
  });

  it("takes the dearest part", () => {
    expect(dearestPrice([{ pricePico: 2_500_000 }, { pricePico: 10_000_000 }])).toBe(10_000_000);
    expect(dearestPrice([])).toBe(0);
  });
});

describe("moneyOf", () => {
  const gpt4o = [
    { name: "input", pricePico: 2_500_000 },
    { name: "output", pricePico: 10_000_000 },
  ];

  it("prices input and output tokens exactly: 1200 × $2.50/1M + 800 × $10/1M = $0.011", () => {
    expect(moneyOf({ input: 1200, output: 800 }, gpt4o)).toBe(11_000n);
    expect(moneyOf({ input: 1200n, output: 800n }, { input: 2_500_000, output: 10_000_000 })).toBe(11_000n);
  });

  it("rounds up once per reservation, not once per part", () => {
    // 1 input token is 2.5 micros, 1 output token 10: 12.5 in all, charged 13 (per part it would be 3 + 10).
    expect(moneyOf({ input: 1, output: 1 }, gpt4o)).toBe(13n);
    // 0.4 + 0.4 micros: one micro, not two.
    expect(moneyOf({ a: 1, b: 1 }, { a: 400_000, b: 400_000 })).toBe(1n);
    expect(moneyOf({ input: 0 }, gpt4o)).toBe(0n);
    expect(moneyOf({}, gpt4o)).toBe(0n);
  });

  it("stays exact where a double would not: 2^63 - 1 units at $1000", () => {
    const units = 2n ** 63n - 1n;
    expect(moneyOf({ units }, { units: MAX_PRICE_PICO })).toBe(units * 1_000_000_000n);
  });

  it("refuses a part it has no price for, and units that are not whole", () => {
    expect(() => moneyOf({ cached: 1 }, gpt4o)).toThrow("no part named 'cached'");
    expect(() => moneyOf({ input: 1.5 }, gpt4o)).toThrow("whole number");
    expect(() => moneyOf({ input: -1 }, gpt4o)).toThrow("0 or more");
  });

  // A property test against exact rational arithmetic, computed a second way: each price as the
  // fraction its decimal text says (digits / 10^places), summed over parts by cross-multiplying.
  it("never under-counts and never over-counts by a whole micro (random prices, parts and amounts)", () => {
    let seed = 0x2545f491;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
    const digits = (n: number) => Array.from({ length: n }, () => String(int(0, 9))).join("");
    for (let run = 0; run < 3000; run++) {
      const partCount = int(1, 8);
      const prices: { name: string; text: string }[] = [];
      for (let i = 0; i < partCount; i++) {
        const places = int(0, 12);
        const text = `${int(0, 3) === 0 ? int(0, 999) : 0}${places > 0 ? `.${digits(places)}` : ""}`;
        prices.push({ name: `p${i}`, text });
      }
      const amounts: Record<string, bigint> = {};
      for (const p of prices)
        if (next() < 0.85) amounts[p.name] = BigInt(int(0, 3) === 0 ? int(0, 2 ** 31) : int(0, 10_000)) * BigInt(int(1, 3) === 1 ? 2 ** 20 : 1);
      const parts = prices.map((p) => {
        const parsed = parsePrice(p.text);
        if (!parsed.ok) throw new Error(parsed.error);
        return { name: p.name, pricePico: parsed.pricePico };
      });
      const micros = moneyOf(amounts, parts);
      // Exact money in micros as num/den: Σ units × (digits / 10^places) × 10^6.
      let num = 0n;
      let den = 1n;
      for (const p of prices) {
        const units = amounts[p.name] ?? 0n;
        const [w = "0", f = ""] = p.text.split(".");
        const pNum = BigInt(w + f) * units * 1_000_000n;
        const pDen = 10n ** BigInt(f.length);
        num = num * pDen + pNum * den;
        den *= pDen;
      }
      // micros >= exact, and micros - exact < 1.
      expect(micros * den >= num, `${JSON.stringify(prices)} ${JSON.stringify(amounts, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`).toBe(
        true,
      );
      expect((micros - 1n) * den < num || (micros === 0n && num === 0n)).toBe(true);
    }
  });
});

describe("microsOfUnits", () => {
  it("is units × price rounded up to a whole micro", () => {
    expect(microsOfUnits(55, 400_000_000)).toBe(22_000);
    expect(microsOfUnits(3, 2_500_000)).toBe(8); // 7.5 micros
    expect(microsOfUnits(0, 2_500_000)).toBe(0);
  });
});
