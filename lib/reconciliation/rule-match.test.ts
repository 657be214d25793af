import { describe, expect, it } from "vitest";
import { decimalToMicros } from "./decimal";
import { matchRule } from "./rule-match";

describe("matchRule", () => {
  const rules = [{ match: "gpt-4o*" }, { match: "gpt-4o-mini*" }, { match: "gpt-4o-mini-2024-07-18" }, { match: "*" }, { match: "sms-outbound" }];
  it("exact beats prefix, the longest prefix wins, case matters", () => {
    expect(matchRule(rules, "gpt-4o-mini-2024-07-18")?.match).toBe("gpt-4o-mini-2024-07-18");
    expect(matchRule(rules, "gpt-4o-mini-2025")?.match).toBe("gpt-4o-mini*");
    expect(matchRule(rules, "gpt-4o-2024-08-06")?.match).toBe("gpt-4o*");
    expect(matchRule(rules, "claude")?.match).toBe("*");
    expect(matchRule(rules.slice(0, 3), "GPT-4o")).toBeNull();
    expect(matchRule([{ match: "sms-outbound" }], "sms-outbound-longcode")).toBeNull();
  });
});

describe("decimalToMicros", () => {
  it("reads decimals and JSON numbers exactly, rounding half-up to the micro", () => {
    expect(decimalToMicros("12.50")).toEqual({ ok: true, micros: 12_500_000 });
    expect(decimalToMicros(0.1)).toEqual({ ok: true, micros: 100_000 });
    expect(decimalToMicros("0.0000005")).toEqual({ ok: true, micros: 1 });
    expect(decimalToMicros("0.00000049")).toEqual({ ok: true, micros: 0 });
    expect(decimalToMicros("123.45", { unitExponent: -2 })).toEqual({ ok: true, micros: 1_234_500 });
    expect(decimalToMicros(1e-7)).toEqual({ ok: true, micros: 0 });
    expect(decimalToMicros(2.5e-6)).toEqual({ ok: true, micros: 3 });
    expect(decimalToMicros("-0.0000015", { negative: true })).toEqual({ ok: true, micros: -2 });
    expect(decimalToMicros("1e3").ok).toBe(false);
    expect(decimalToMicros("-1").ok).toBe(false);
    expect(decimalToMicros("1,5").ok).toBe(false);
    expect(decimalToMicros(Number.NaN).ok).toBe(false);
  });
});
