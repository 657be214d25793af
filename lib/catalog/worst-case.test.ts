import { describe, expect, it } from "vitest";
import { ceilingSentence, describeWorstCase, worstCases } from "./worst-case";
import type { CeilingSpec, EndpointFields } from "./spec";

const day = (value: number, metric: "units" | "calls" = "units"): CeilingSpec => ({
  metric,
  scope: "global",
  window: "utc_day",
  value,
  min: 0,
  max: value,
  default: value,
  alertThresholds: [],
});

const llm: EndpointFields & { key: string } = {
  key: "llm.gpt-4o",
  name: "GPT-4o",
  unit: "tokens",
  parts: [
    { name: "input", pricePico: 2_500_000 },
    { name: "output", pricePico: 10_000_000 },
  ],
  currency: "USD",
  planAllowance: null,
  billingDay: 1,
  perCallMax: 8000,
  throttlePerMinute: null,
  throttleFailOpen: false,
};

describe("the worst case of priced parts", () => {
  it("prices every unit at the dearest part: a million tokens a day at $2.50/$10 per 1M is at most $10.00", () => {
    const w = worstCases([day(1_000_000)], llm);
    expect(w.day).toEqual({ units: 1_000_000, micros: 10_000_000 });
    expect(describeWorstCase(w.day, "day", llm)).toBe("$10.00 a day (1,000,000 tokens)");
    expect(ceilingSentence(day(1_000_000), llm).worstCase).toBe("worst case $10.00 a day");
  });

  it("rounds a fraction of a micro up, never down", () => {
    const one = { ...llm, parts: [{ name: "units", pricePico: 2_500_000 }] };
    // 3 tokens at 2.5 micros: 7.5 micros, stated as 8.
    expect(worstCases([day(3)], one).day).toEqual({ units: 3, micros: 8 });
    // A calls ceiling bounds units by the per-call max: 2 calls × 8000 tokens.
    expect(worstCases([day(2, "calls")], llm).day).toEqual({ units: 16_000, micros: 160_000 });
  });

  it("says a free endpoint costs nothing, and an unbounded one is unbounded", () => {
    const free = { ...llm, parts: [{ name: "units", pricePico: 0 }] };
    expect(worstCases([day(100)], free).month).toEqual({ units: 3100, micros: 0 });
    expect(describeWorstCase(worstCases([], llm).day, "day", llm)).toBe("unbounded: no global ceiling limits a day");
  });
});
