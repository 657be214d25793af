import { describe, expect, it } from "vitest";
import type { ProviderCap } from "./types";
import { readFileSync } from "node:fs";
import { ProviderCapInput, parseCapAmount, secondCapVerdict, standingSecondCapVerdict } from "./second-cap";

const input = (over: Record<string, unknown>) => ({ measure: "money", window: "month", amount: "50", setAt: "OpenAI project llm-prod, Limits", ...over });
const messages = (raw: unknown) => {
  const r = ProviderCapInput.safeParse(raw);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("ProviderCapInput", () => {
  it("reads money as micros and units as a whole number", () => {
    expect(ProviderCapInput.parse(input({ amount: "12.5" }))).toEqual({
      measure: "money",
      window: "month",
      amount: 12_500_000,
      setAt: "OpenAI project llm-prod, Limits",
    });
    expect(ProviderCapInput.parse(input({ amount: "0.000001" })).amount).toBe(1);
    expect(ProviderCapInput.parse(input({ measure: "units", window: "day", amount: " 100000 " })).amount).toBe(100_000);
  });

  it.each([
    ["1e9", "money", "amount must be a plain decimal of the currency, such as 50 or 12.50, got '1e9'"],
    ["500abc", "units", "amount must be a whole number of units, such as 100000, got '500abc'"],
    ["-5", "units", "amount must be more than 0, got '-5'"],
    ["", "money", "amount is required: type a plain decimal of the currency, such as 50 or 12.50"],
    ["0", "units", "amount must be more than 0 (a cap of nothing is a kill switch, not a cap), got '0'"],
    ["0.00", "money", "amount must be more than 0 (a cap of nothing is a kill switch, not a cap), got '0.00'"],
    ["1.5", "units", "amount must be a whole number of units, such as 100000, got '1.5'"],
    ["1.0000001", "money", "amount must have at most 6 decimal places (one micro), got '1.0000001'"],
    ["99999999999999999999", "units", "amount is too large, got '99999999999999999999'"],
  ])("refuses amount %j (%s) with a clear sentence", (amount, measure, message) => {
    expect(parseCapAmount(amount, measure as "units" | "money")).toEqual({ ok: false, error: message });
    expect(messages(input({ amount, measure }))).toEqual([`amount: ${message}`]);
  });

  it("refuses a place that is empty, too long or holds control characters, and unknown fields", () => {
    expect(messages(input({ setAt: "   " }))[0]).toMatch(/^setAt: where it is set is required/);
    expect(messages(input({ setAt: "x".repeat(201) }))).toEqual(["setAt: where it is set must be at most 200 characters"]);
    expect(messages(input({ setAt: "a\u0000b" }))).toEqual(["setAt: where it is set must not contain control characters"]);
    expect(messages(input({ setAt: "a\u001bb" }))).toEqual(["setAt: where it is set must not contain control characters"]);
    expect(ProviderCapInput.parse(input({ setAt: "  Twilio console  " })).setAt).toBe("Twilio console");
    expect(messages(input({ measure: "calls" }))).toEqual(["measure: measure must be 'units' or 'money', got 'calls'"]);
    expect(messages(input({ window: "week" }))).toEqual(["window: window must be 'day' or 'month', got 'week'"]);
    expect(messages(input({ amount: 50 }))[0]).toMatch(/^amount: amount must be text/);
    expect(messages(input({ extra: 1 })).length).toBe(1);
  });
});

describe("secondCapVerdict", () => {
  const e = { unit: "emails", currency: "USD" };
  const worst = { day: { units: 1000, micros: 1_200_000 }, month: { units: 31_000, micros: 37_200_000 } };
  const cap = (c: Partial<ProviderCap>): ProviderCap => ({
    endpointId: 1,
    measure: "money",
    window: "month",
    amount: 50_000_000,
    setAt: "x",
    recordedBy: "a",
    recordedAt: new Date(0),
    ...c,
  });

  it("no cap recorded is missing", () => {
    expect(secondCapVerdict(null, worst, e)).toEqual({ state: "missing" });
  });

  it("at or above the worst case is a backstop; below it the provider binds first", () => {
    expect(secondCapVerdict(cap({}), worst, e)).toEqual({ state: "above", capText: "$50.00 a month", worstText: "$37.20 a month (31,000 emails)" });
    expect(secondCapVerdict(cap({ amount: 37_200_000 }), worst, e).state).toBe("above");
    expect(secondCapVerdict(cap({ amount: 37_199_999 }), worst, e).state).toBe("below");
    expect(secondCapVerdict(cap({ measure: "units", window: "day", amount: 999 }), worst, e)).toEqual({
      state: "below",
      capText: "999 emails a day",
      worstText: "$1.20 a day (1,000 emails)",
    });
    expect(secondCapVerdict(cap({ measure: "units", window: "day", amount: 1000 }), worst, e).state).toBe("above");
  });

  it("no worst case for the window is unbounded", () => {
    expect(secondCapVerdict(cap({ window: "day" }), { day: null, month: worst.month }, e)).toEqual({ state: "unbounded", capText: "$50.00 a day" });
  });
});

describe("standingSecondCapVerdict (the endpoint page's second-cap card)", () => {
  const e = { unit: "emails", currency: "USD", perCallMax: 1, parts: [{ name: "units", pricePico: 1_200_000_000 }] };
  const cap: ProviderCap = { endpointId: 1, measure: "units", window: "day", amount: 999, setAt: "x", recordedBy: "a", recordedAt: new Date(0) };
  const ceiling = { metric: "units" as const, scope: "global" as const, window: "utc_day" as const };

  it("judges a killed ceiling at the value its kill keeps, not at 0", () => {
    const live = standingSecondCapVerdict(cap, [{ ...ceiling, value: 1000, valueBeforeKill: null }], e);
    expect(live).toEqual({ state: "below", capText: "999 emails a day", worstText: "$1.20 a day (1,000 emails)" });
    // Killed: value 0, 1000 kept. The provider's cap still binds first once the kill is lifted.
    expect(standingSecondCapVerdict(cap, [{ ...ceiling, value: 0, valueBeforeKill: 1000 }], e)).toEqual(live);
  });

  it("is what the endpoint page shows", () => {
    const page = readFileSync("app/(dashboard)/endpoints/[key]/page.tsx", "utf8");
    expect(page).toMatch(/standingSecondCapVerdict\(providerCap, detail\.ceilings, detail\)/);
    expect(page).not.toMatch(/worstCases\(detail\.ceilings/);
  });
});
