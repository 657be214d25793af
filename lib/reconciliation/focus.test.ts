import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseUsageFile } from "./file";
import { decimalText, exactDecimal, focusInstant, wholeUnits } from "./focus";

// FOCUS exports read as they are: one sample shaped like each cloud's export (AWS Data Exports'
// FOCUS 1.0 with AWS columns; Google Cloud's BigQuery FOCUS export written out as CSV, JSON across
// lines; Azure's FOCUS export with a BOM and CRLF), each summed per day, item and unit to the
// micro; days in a zone that changes its clocks; bad lines refused whole, each named.

const sample = (name: string) => readFileSync(path.join(__dirname, "focus-samples", name), "utf8");
const utc = { timeZone: "UTC", currency: "USD" };
const newYork = { timeZone: "America/New_York", currency: "USD" };
type Opts = { timeZone: string; currency: string };
const rowsOf = (text: string, opts: Opts = utc) => {
  const parsed = parseUsageFile(text, opts);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.rows;
};
const summary = (text: string, opts: Opts = utc) =>
  rowsOf(text, opts)
    .map((r) => [r.day, r.item, r.units, r.costMicros, r.unit ?? null])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1])) || String(a[4]).localeCompare(String(b[4])));

/** A FOCUS file of the columns Ceilings reads, one line a row; a row's missing fields are empty. */
const HEAD = [
  "ChargePeriodStart",
  "ChargePeriodEnd",
  "BilledCost",
  "BillingCurrency",
  "ChargeCategory",
  "ChargeClass",
  "BillingPeriodStart",
  "ServiceName",
  "ChargeDescription",
  "ConsumedQuantity",
  "ConsumedUnit",
  "Tags",
] as const;
type Row = Partial<Record<(typeof HEAD)[number], string>>;
const focus = (rows: Row[]) =>
  [
    HEAD.join(","),
    ...rows.map((r) =>
      HEAD.map(
        (h) => r[h] ?? { BillingCurrency: "USD", ChargeCategory: "Usage", ServiceName: "Vertex AI", ChargeDescription: "Gemini Input" }[h as string] ?? "",
      ).join(","),
    ),
  ].join("\n");
const hour = (startIso: string, cost = "0.01", quantity = "1"): Row => ({
  ChargePeriodStart: startIso,
  ChargePeriodEnd: new Date(Date.parse(startIso) + 3_600_000).toISOString(),
  BilledCost: cost,
  ConsumedQuantity: quantity,
});

describe("FOCUS exports", () => {
  it("AWS: Bedrock's hourly rows summed per day and usage type, BilledCost to the micro, tax and a credit items of their own", () => {
    expect(summary(sample("aws.csv"))).toEqual([
      ["2026-11-01", "Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens", 200_000, 600_000, "Tokens"],
      // 20,000 + 1,000.5 tokens rounded up; $0.30 + $0.0150075 rounded once, half up.
      ["2026-11-01", "Amazon Bedrock: USE1-Claude3.5Sonnet-output-tokens", 21_001, 315_008, "Tokens"],
      ["2026-11-01", "Credit: Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens", 0, -500_000, null],
      ["2026-11-01", "Tax: Amazon Bedrock: Tax for product code AmazonBedrock", 0, 90_000, null],
    ]);
    // What was summed, then every column of the first line: the tags (commas and quotes inside), AWS's own.
    expect(rowsOf(sample("aws.csv"))[0]?.raw).toMatchObject({
      format: "FOCUS",
      lines: [2, 3],
      sum: { BilledCost: "0.6", EffectiveCost: "0.6", ConsumedQuantity: "200000" },
      first: {
        ChargeDescription: "$0.003 per 1K input tokens for Claude 3.5 Sonnet in US East (N. Virginia)",
        Tags: '{"team":"growth","feature":"chat, summaries"}',
        x_UsageType: "USE1-Claude3.5Sonnet-input-tokens",
      },
    });
  });

  it("AWS in a New York source: an hour on its own day there, a day-long credit and the month's tax on the day they start", () => {
    expect(summary(sample("aws.csv"), newYork).map((r) => [r[0], r[1]])).toEqual([
      ["2026-11-01", "Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens"],
      ["2026-11-01", "Amazon Bedrock: USE1-Claude3.5Sonnet-output-tokens"],
      ["2026-11-01", "Credit: Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens"],
      ["2026-11-01", "Tax: Amazon Bedrock: Tax for product code AmazonBedrock"],
    ]);
  });

  it("Google Cloud: BigQuery's timestamps, columns in its order, JSON across lines; an hour a commitment covers bills nothing", () => {
    expect(summary(sample("gcp.csv"))).toEqual([
      ["2026-11-01", "Tax: Vertex AI: Sales tax", 0, 280_000, null],
      ["2026-11-01", "Vertex AI: Gemini 2.5 Pro Input Tokens", 2_000_000, 2_500_000, "count"],
      ["2026-11-01", "Vertex AI: Gemini 2.5 Pro Output Tokens", 100_000, 1_000_000, "count"],
      ["2026-11-02", "Vertex AI: Gemini 2.5 Pro Input Tokens", 400_000, 0, "count"],
    ]);
    const rows = rowsOf(sample("gcp.csv"));
    // Each record is named by the line it starts on: x_Project spans 11 lines.
    expect(rows.map((r) => r.raw.lines)).toEqual([[2, 14], [26], [38], [50]]);
    expect(rows[2]?.raw).toMatchObject({
      sum: { BilledCost: "0", EffectiveCost: "0.4" },
      first: {
        x_Project: expect.stringContaining('\n  "number": "123456789012",\n'),
        x_Labels: '[{"key":"env","value":"prod"},{"key":"team","value":"search, \\"beta\\""}]',
      },
    });
  });

  it("Azure: a byte order mark, CRLF lines, a day a row; two accounts' rows summed, hours rounded up, a purchase and a correction items of their own", () => {
    const expected = [
      // October's refund, on November's invoice: on the invoice's first day, never on October 15.
      ["2026-11-01", "Correction: Adjustment: Azure OpenAI: gpt-4o-0806 Inp glbl Tokens", 0, -2_500_000, "Tokens"],
      ["2026-11-01", "Azure OpenAI: gpt-4o-0806 Inp glbl Tokens", 2_000_400, 5_001_000, "Tokens"],
      ["2026-11-01", "Azure OpenAI: gpt-4o-0806 Outp glbl Tokens", 100_000, 1_000_000, "Tokens"],
      ["2026-11-01", "Azure OpenAI: Provisioned Managed Global Hours", 13, 0, "Hours"],
      ["2026-11-01", "Purchase: Azure OpenAI: Azure OpenAI Provisioned Throughput Unit reservation", 0, 260_000_000, null],
    ];
    const byItem = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(byItem(summary(sample("azure.csv")))).toEqual(byItem(expected));
    // A UTC day lands on its own date west of UTC too (from its start it would be the evening before).
    expect(byItem(summary(sample("azure.csv"), newYork))).toEqual(byItem(expected));
    expect(byItem(summary(sample("azure.csv"), { timeZone: "America/Los_Angeles", currency: "USD" }))).toEqual(byItem(expected));
    const tokens = rowsOf(sample("azure.csv")).find((r) => r.item === "Azure OpenAI: gpt-4o-0806 Inp glbl Tokens");
    expect(tokens?.raw).toMatchObject({
      lines: [2, 3],
      sum: { BilledCost: "5.001", ConsumedQuantity: "2000400" },
      first: { Tags: '{"costcenter":"ai","note":"quoted ""here"", with a comma"}', ResourceName: "acme-openai" },
    });
  });

  it("days in New York across both clock changes: the fall's day has 25 hours, the spring's 23", () => {
    const hours = (fromIso: string, n: number) => Array.from({ length: n }, (_, i) => hour(new Date(Date.parse(fromIso) + i * 3_600_000).toISOString()));
    const perDay = (rows: ReturnType<typeof rowsOf>) => Object.fromEntries(rows.map((r) => [r.day, [r.units, r.costMicros]]));
    // 2026-11-01 runs 04:00 UTC (00:00 EDT) to 05:00 UTC the next day (00:00 EST); 01:00 comes twice.
    expect(perDay(rowsOf(focus(hours("2026-11-01T00:00:00Z", 30)), newYork))).toEqual({
      "2026-10-31": [4, 40_000],
      "2026-11-01": [25, 250_000],
      "2026-11-02": [1, 10_000],
    });
    // 2026-03-08 runs 05:00 UTC (00:00 EST) to 04:00 UTC the next day (00:00 EDT); 02:00 never comes.
    expect(perDay(rowsOf(focus(hours("2026-03-08T00:00:00Z", 48)), newYork))).toEqual({
      "2026-03-07": [5, 50_000],
      "2026-03-08": [23, 230_000],
      "2026-03-09": [20, 200_000],
    });
    // A row of the UTC day across the change is that date; a month's row the month's first day.
    const long = focus([
      { ChargePeriodStart: "2026-11-01T00:00:00Z", ChargePeriodEnd: "2026-11-02T00:00:00Z", BilledCost: "1" },
      { ChargePeriodStart: "2026-11-01T00:00:00Z", ChargePeriodEnd: "2026-12-01T00:00:00Z", BilledCost: "2", ChargeCategory: "Tax" },
    ]);
    expect(summary(long, newYork).map((r) => [r[0], r[1]])).toEqual([
      ["2026-11-01", "Tax: Vertex AI: Gemini Input"],
      ["2026-11-01", "Vertex AI: Gemini Input"],
    ]);
  });

  it("sums money and quantities exactly, rounding once: two half micros are one micro, three 0.4 hours one whole hour more", () => {
    const rows = rowsOf(
      focus([hour("2026-11-01T00:00:00Z", "0.0000005", "0.4"), hour("2026-11-01T01:00:00Z", "5E-7", "0.4"), hour("2026-11-01T02:00:00Z", "0", "0.4")]),
    );
    expect(rows.map((r) => [r.units, r.costMicros, r.raw.sum])).toEqual([[2, 1, { BilledCost: "0.000001", ConsumedQuantity: "1.2" }]]);
    // A float's noise in the export is not a unit more; a hundredth is.
    expect(rowsOf(focus([hour("2026-11-01T00:00:00Z", "1", "12.000000000000002")]))[0]?.units).toBe(12);
    expect(rowsOf(focus([hour("2026-11-01T00:00:00Z", "1", "12.01")]))[0]?.units).toBe(13);
    // A credit rounds half away from zero, as decimal.ts does.
    expect(rowsOf(focus([{ ...hour("2026-11-01T00:00:00Z", "-0.0000005", ""), ChargeCategory: "Credit" }]))[0]?.costMicros).toBe(-1);
  });

  it("keeps two units of one item and day apart instead of adding tokens to requests", () => {
    const text = focus(
      [
        hour("2026-11-01T00:00:00Z", "1", "1000"),
        { ...hour("2026-11-01T01:00:00Z", "2", "3"), ConsumedUnit: "Requests" },
        hour("2026-11-01T02:00:00Z", "1", "500"),
      ].map((r) => ({ ConsumedUnit: "Tokens", ...r })),
    );
    expect(summary(text)).toEqual([
      ["2026-11-01", "Vertex AI: Gemini Input", 3, 2_000_000, "Requests"],
      ["2026-11-01", "Vertex AI: Gemini Input", 1500, 2_000_000, "Tokens"],
    ]);
  });

  it("reads a header in any case (Athena lowers it) and refuses a column named twice", () => {
    const lower = focus([hour("2026-11-01T00:00:00Z")]).replace(/^[^\n]*/, (h) => h.toLowerCase());
    expect(summary(lower)).toEqual([["2026-11-01", "Vertex AI: Gemini Input", 1, 10_000, null]]);
    expect(parseUsageFile(`${HEAD.join(",")},billedcost\n`, utc)).toEqual({ ok: false, errors: [{ line: 1, reason: "column 'billedcost' appears twice" }] });
  });

  it("a bad line refuses the whole file, each named with every reason", () => {
    const text = focus([
      { ...hour("2026-11-01T00:00:00Z"), BillingCurrency: "EUR" },
      { ...hour("2026-11-01T00:00:00Z"), ChargePeriodStart: "yesterday" },
      { ...hour("2026-11-01T00:00:00Z"), BilledCost: "1;5" },
      { ...hour("2026-11-01T00:00:00Z"), BilledCost: "" },
      { ...hour("2026-11-01T00:00:00Z"), ConsumedQuantity: "-3" },
      { ...hour("2026-11-01T00:00:00Z"), ServiceName: "Vertex\u0007AI" },
      { ...hour("2026-11-01T00:00:00Z"), ChargeCategory: "Refund", ChargeClass: "Reversal" },
      { ...hour("2026-11-01T05:00:00Z"), ChargePeriodEnd: "2026-11-01T04:00:00Z" },
      { ...hour("2026-10-15T00:00:00Z"), ChargeClass: "Correction" },
      { ...hour("2026-02-30T00:00:00Z"), ChargePeriodStart: "2026-02-30T00:00:00Z" },
      { ...hour("2026-11-01T00:00:00Z"), Tags: "{\u0000}" },
      hour("2026-11-01T00:00:00Z"),
    ]);
    expect(parseUsageFile(`${text}\n2026-11-01T00:00:00Z,"unclosed`, utc)).toEqual({
      ok: false,
      errors: [
        { line: 2, reason: "BillingCurrency is EUR, the source counts USD" },
        { line: 3, reason: "ChargePeriodStart must be a time such as 2026-11-01T00:00:00Z, got 'yesterday'" },
        { line: 4, reason: "BilledCost must be a decimal such as 0.36, got '1;5'" },
        { line: 5, reason: "BilledCost must be a decimal such as 0.36, got ''" },
        { line: 6, reason: "ConsumedQuantity must be a number 0 or more, got '-3'" },
        { line: 7, reason: "ServiceName contains a control character (U+0007)" },
        {
          line: 8,
          reason: "ChargeCategory must be Usage, Purchase, Tax, Credit, Adjustment, got 'Refund'; ChargeClass must be empty or Correction, got 'Reversal'",
        },
        { line: 9, reason: "ChargePeriodEnd (2026-11-01T04:00:00Z) must be after ChargePeriodStart (2026-11-01T05:00:00Z)" },
        {
          line: 10,
          reason: "a correction counts on the first day of its billing period: BillingPeriodStart must be a time such as 2026-11-01T00:00:00Z, got ''",
        },
        { line: 11, reason: "ChargePeriodStart must be a time such as 2026-11-01T00:00:00Z, got '2026-02-30T00:00:00Z'" },
        { line: 12, reason: "Tags contains a NUL character (U+0000)" },
        { line: 14, reason: "a quoted field is not closed" },
      ],
    });
  });

  it("refuses a header without the columns it reads, naming each", () => {
    expect(parseUsageFile("ChargePeriodStart,BilledCost\n2026-11-01T00:00:00Z,1\n", utc)).toEqual({
      ok: false,
      errors: ["ChargePeriodEnd", "BillingCurrency", "ChargeCategory", "ServiceName"]
        .map((c) => ({ line: 1, reason: `a FOCUS export needs the column '${c}' (FOCUS 1.0 and later)` }))
        .concat([{ line: 1, reason: "a FOCUS export needs ChargeDescription or SkuId to name its items" }]),
    });
  });

  it("reads the export docs/reconciliation.md shows as the page says", () => {
    const page = readFileSync(path.join(__dirname, "..", "..", "docs", "reconciliation.md"), "utf8");
    const example = /### FOCUS exports[\s\S]*?```csv\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
    expect(summary(example)).toEqual([
      ["2026-11-01", "Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens", 200_000, 600_000, "Tokens"],
      ["2026-11-01", "Tax: Amazon Bedrock: Tax for product code AmazonBedrock", 0, 90_000, null],
    ]);
  });

  it("is read only for a source: its zone and currency are never guessed", () => {
    expect(() => parseUsageFile(sample("aws.csv"))).toThrow(/timeZone and currency/);
  });

  it("reads FOCUS instants, decimals and quantities strictly", () => {
    expect(focusInstant("2026-11-01T05:00:00.000Z")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01 05:00:00 UTC")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01T05:00Z")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01T00:00:00-0500")?.toISOString()).toBe("2026-11-01T05:00:00.000Z");
    expect(focusInstant("2026-11-01T00:00:00.1234567+01:00")?.toISOString()).toBe("2026-10-31T23:00:00.123Z");
    for (const bad of ["2026-11-01", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-11-01T24:00:00Z", "tomorrow", "2026-11-01T00:00:00 PST"])
      expect(focusInstant(bad), bad).toBeNull();
    expect(["0.36", "1.5E-5", "-0.5", "0", "123456789.000000000000000001", "1e-30"].map((t) => decimalText(exactDecimal(t) ?? 999n))).toEqual([
      "0.36",
      "0.000015",
      "-0.5",
      "0",
      "123456789.000000000000000001",
      "0",
    ]);
    for (const bad of ["", "1,5", "NaN", "+1", "1e400", ".5", "0x10"]) expect(exactDecimal(bad), bad).toBeNull();
    expect([
      wholeUnits(12n * 10n ** 18n),
      wholeUnits(exactDecimal("12.01") ?? 0n),
      wholeUnits(exactDecimal("0.000000001") ?? 0n),
      wholeUnits(exactDecimal("0.0000000011") ?? 0n),
    ]).toEqual([12n, 13n, 0n, 1n]);
  });
});
