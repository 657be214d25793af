import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseUsageFile } from "./file";
import { focusInstant, wholeUnits } from "./focus";

// FOCUS exports read as they are: one sample shaped like each cloud's export (AWS Data Exports'
// FOCUS 1.0 with AWS columns, Google Cloud's BigQuery FOCUS view, Azure's FOCUS export with a BOM and
// CRLF), each summed per day and item to the micro; bad lines refused whole, each named.

const sample = (name: string) => readFileSync(path.join(__dirname, "focus-samples", name), "utf8");
const utc = { timeZone: "UTC", currency: "USD" };
const summary = (text: string, opts = utc) => {
  const parsed = parseUsageFile(text, opts);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.unit ?? null]).sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1])));
};

describe("FOCUS exports", () => {
  it("AWS: Bedrock's hourly rows summed per day and description, BilledCost to the micro, tax and credits items of their own", () => {
    expect(summary(sample("aws.csv"))).toEqual([
      ["2026-11-01", "Amazon Bedrock: Claude 3.5 Sonnet input tokens", 200_000, 600_000, "Tokens"],
      // 20,000 + 1,000.5 rounded up; $0.30 + $0.0150075 (half a micro, rounded up).
      ["2026-11-01", "Amazon Bedrock: Claude 3.5 Sonnet output tokens", 21_001, 315_008, "Tokens"],
      ["2026-11-01", "Credit: Amazon Bedrock: AWS Activate credits", 0, -500_000, null],
      ["2026-11-01", "Tax: Amazon Bedrock: Tax for product code AmazonBedrock", 0, 90_000, null],
    ]);
    const parsed = parseUsageFile(sample("aws.csv"), utc);
    // Every column is kept: the effective cost, the tags (commas and quotes inside), AWS's own.
    expect(parsed.ok && parsed.rows[0]?.raw).toMatchObject({ format: "FOCUS", lines: [2, 3], EffectiveCost: "0.36", Tags: '{"team":"growth","feature":"chat, summaries"}', x_UsageType: "USE1-Claude3.5Sonnet-input-tokens" });
  });

  it("AWS in a New York source: each charge on its day there (the monthly tax starts on Oct 31, 20:00 EDT)", () => {
    const rows = summary(sample("aws.csv"), { timeZone: "America/New_York", currency: "USD" });
    expect(rows.map((r) => [r[0], r[1]])).toEqual([
      ["2026-10-31", "Credit: Amazon Bedrock: AWS Activate credits"],
      ["2026-10-31", "Tax: Amazon Bedrock: Tax for product code AmazonBedrock"],
      ["2026-11-01", "Amazon Bedrock: Claude 3.5 Sonnet input tokens"],
      ["2026-11-01", "Amazon Bedrock: Claude 3.5 Sonnet output tokens"],
    ]);
  });

  it("Google Cloud: BigQuery's timestamps, columns in another order; an hour a commitment covers bills nothing", () => {
    expect(summary(sample("gcp.csv"))).toEqual([
      ["2026-11-01", "Vertex AI: Gemini 2.5 Pro Input Tokens", 2_000_000, 2_500_000, "count"],
      ["2026-11-01", "Vertex AI: Gemini 2.5 Pro Output Tokens", 100_000, 1_000_000, "count"],
      ["2026-11-02", "Vertex AI: Gemini 2.5 Pro Input Tokens", 400_000, 0, "count"],
    ]);
  });

  it("Azure: a byte order mark and CRLF lines; a reservation purchase is an item of its own at what was billed", () => {
    expect(summary(sample("azure.csv"))).toEqual([
      ["2026-11-01", "Azure OpenAI: gpt-4o-0806 Inp glbl Tokens", 2_001, 5_001_000, "1K Tokens"],
      ["2026-11-01", "Azure OpenAI: gpt-4o-0806 Outp glbl Tokens", 100, 1_000_000, "1K Tokens"],
      ["2026-11-01", "Purchase: Azure OpenAI: Provisioned Throughput Unit reservation", 0, 260_000_000, null],
    ]);
  });

  it("a bad line refuses the whole file, each named: another currency, a time that is not one, a cost or quantity that is not a number, a control character", () => {
    const head = "ChargePeriodStart,BilledCost,BillingCurrency,ServiceName,ChargeDescription,ConsumedQuantity";
    const text = [head, "2026-11-01T00:00:00Z,1.00,EUR,Amazon Bedrock,x,1", "yesterday,1,USD,S,x,1", "2026-11-01T00:00:00Z,1;5,USD,S,x,1", "2026-11-01T00:00:00Z,1,USD,S,x,-3", "2026-11-01T00:00:00Z,1,USD,S\u0007,x,1", "2026-11-01T00:00:00Z,1,USD,S,ok,1"].join("\n");
    const parsed = parseUsageFile(text, utc);
    expect(parsed).toEqual({
      ok: false,
      errors: [
        { line: 2, reason: "BillingCurrency is EUR, the source counts USD" },
        { line: 3, reason: "ChargePeriodStart must be a time such as 2026-11-01T00:00:00Z, got 'yesterday'" },
        { line: 4, reason: "BilledCost must be a decimal, got '1;5'" },
        { line: 5, reason: "ConsumedQuantity must be a number 0 or more, got '-3'" },
        { line: 6, reason: "ServiceName contains a control character (U+0007)" },
      ],
    });
    expect(parseUsageFile("ChargePeriodStart,BilledCost\n2026-11-01T00:00:00Z,1\n", utc)).toMatchObject({ ok: false, errors: [{ line: 1, reason: expect.stringContaining("'BillingCurrency'") }, { line: 1, reason: expect.stringContaining("'ServiceName'") }, { line: 1, reason: expect.stringContaining("ChargeDescription or SkuId") }] });
  });

  it("reads FOCUS instants and quantities strictly", () => {
    expect(focusInstant("2026-11-01T05:00:00Z")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01 05:00:00 UTC")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01T00:00:00-0500")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01T00:00:00.123+01:00")?.toISOString()).toBe("2026-10-31T23:00:00.123Z");
    for (const bad of ["2026-11-01", "2026-13-01T00:00:00Z", "tomorrow", "2026-11-01T00:00:00 PST"]) expect(focusInstant(bad)).toBeNull();
    expect([wholeUnits("12"), wholeUnits("12.0"), wholeUnits("12.01"), wholeUnits("1e3"), wholeUnits("")]).toEqual([12, 12, 13, 1000, 0]);
    for (const bad of ["-1", "1,5", "NaN", "1e400"]) expect(wholeUnits(bad)).toBeNull();
  });
});
