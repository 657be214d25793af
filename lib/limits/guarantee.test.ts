import { describe, expect, it } from "vitest";
import { derivedDefault, describeGuarantee, durationLabel, ordinal, unitLabel } from "@/lib/limits/guarantee";

const email = { key: "email.subscribe", unit: "emails", billingDay: 1, perCallMax: 1 };

describe("describeGuarantee", () => {
  it.each([
    [{ metric: "units", scope: "global", window: "utc_day", windowSeconds: null, value: 100 }, email, "at most 100 emails per UTC day"],
    [
      { metric: "units", scope: "global", window: "billing_month", windowSeconds: null, value: 3000 },
      email,
      "at most 3,000 emails per billing month (from the 1st)",
    ],
    [{ metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 86_400, value: 1 }, email, "at most 1 email per inbox per 24 hours"],
    [
      { metric: "units", scope: "caller", window: "utc_day", windowSeconds: null, value: 50_000 },
      { key: "llm.chat", unit: "tokens", billingDay: 15, perCallMax: 8000 },
      "at most 50,000 tokens per billing account per UTC day",
    ],
    [
      { metric: "calls", scope: "global", window: "billing_month", windowSeconds: null, value: 1 },
      { key: "llm.chat", unit: "tokens", billingDay: 22, perCallMax: 8000 },
      "at most 1 call per billing month (from the 22nd)",
    ],
    [
      { metric: "units", scope: "destination", window: "first_hit", windowSeconds: 3600, value: 3 },
      { key: "sms.password-reset", unit: "SMS", billingDay: 1, perCallMax: 1 },
      "at most 3 SMS per phone number per hour",
    ],
    [{ metric: "units", scope: "global", window: "utc_day", windowSeconds: null, value: 0 }, email, "killed: no emails at all until restored"],
  ] as const)("%j", (ceiling, endpoint, sentence) => {
    expect(describeGuarantee(ceiling, endpoint)).toBe(sentence);
  });
});

describe("labels", () => {
  it("pluralises units", () => {
    expect([unitLabel("emails", 1), unitLabel("email", 2), unitLabel("SMS", 1), unitLabel("codes", 300)]).toEqual(["email", "emails", "SMS", "codes"]);
  });
  it("names durations and ordinals", () => {
    expect([durationLabel(86_400), durationLabel(60), durationLabel(90), durationLabel(604_800)]).toEqual(["24 hours", "minute", "90 seconds", "week"]);
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 28].map(ordinal)).toEqual(["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "28th"]);
  });
});

describe("derivedDefault", () => {
  it("derives the daily ceiling from the plan allowance", () => {
    expect(derivedDefault(3000, "emails")).toEqual({ daily: 100, sentence: "3,000 emails a month ≈ 100 a day" });
    expect(derivedDefault(null, "emails")).toBeNull();
  });
});
