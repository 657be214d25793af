import { describe, expect, it } from "vitest";
import { MAX_FILE_ROWS, parseUsageFile } from "./file";

// A usage file is read whole or refused whole: every bad line is named with its reason.

describe("parseUsageFile: CSV", () => {
  it("reads rows with and without cost, quoted fields and CRLF, cost into micros exactly", () => {
    const text =
      'date,item,units,cost\r\n2026-11-01,email.send,1000,12.50\r\n2026-11-01,"postmark, outbound ""eu""",3,\r\n2026-11-02,email.send,0,0.0000005\r\n';
    const parsed = parseUsageFile(text);
    expect(parsed).toEqual({
      ok: true,
      rows: [
        {
          day: "2026-11-01",
          item: "email.send",
          units: 1000,
          costMicros: 12_500_000,
          raw: { line: 2, date: "2026-11-01", item: "email.send", units: "1000", cost: "12.50" },
        },
        {
          day: "2026-11-01",
          item: 'postmark, outbound "eu"',
          units: 3,
          costMicros: null,
          raw: { line: 3, date: "2026-11-01", item: 'postmark, outbound "eu"', units: "3", cost: "" },
        },
        {
          day: "2026-11-02",
          item: "email.send",
          units: 0,
          costMicros: 1,
          raw: { line: 4, date: "2026-11-02", item: "email.send", units: "0", cost: "0.0000005" },
        },
      ],
    });
  });

  it("takes a header without the cost column, in any order", () => {
    const parsed = parseUsageFile("units,item,date\n5,sms,2026-11-01\n");
    expect(parsed).toMatchObject({ ok: true, rows: [{ day: "2026-11-01", item: "sms", units: 5, costMicros: null }] });
  });

  it("refuses the whole file, naming every bad line with its reason", () => {
    const text = [
      "date,item,units,cost",
      "2026-11-01,good,1,1.00",
      "2026-02-30,a,1,", // not a real day
      "2026-11-01,b,1e9,", // exponent
      "2026-11-01,c,500abc,",
      "2026-11-01,d,-5,",
      "2026-11-01,e,,",
      "2026-11-01,f,1,-1.00",
      "2026-11-01,g,1,1e3",
      "2026-11-01,h\u0000x,1,",
      "2026-11-01,,1,",
      `2026-11-01,${"x".repeat(201)},1,`,
      "2026-11-01,good,2,",
      "2026-11-01,short",
      "11/01/2026,i,1,",
    ].join("\n");
    const parsed = parseUsageFile(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toEqual([
      { line: 3, reason: "date must be a real day written YYYY-MM-DD, got '2026-02-30'" },
      { line: 4, reason: "units must be a whole number 0 or more, got '1e9'" },
      { line: 5, reason: "units must be a whole number 0 or more, got '500abc'" },
      { line: 6, reason: "units must be a whole number 0 or more, got '-5'" },
      { line: 7, reason: "units must be a whole number 0 or more, got ''" },
      { line: 8, reason: "cost must be a plain decimal 0 or more such as 12.50, got '-1.00'" },
      { line: 9, reason: "cost must be a plain decimal 0 or more such as 12.50, got '1e3'" },
      { line: 10, reason: "item contains a control character (U+0000)" },
      { line: 11, reason: "item is empty" },
      { line: 12, reason: "item is 201 characters long; at most 200" },
      { line: 13, reason: "duplicate of line 2: 2026-11-01 good appears twice" },
      { line: 14, reason: "expected 4 fields (date,item,units,cost), got 2" },
      { line: 15, reason: "date must be a real day written YYYY-MM-DD, got '11/01/2026'" },
    ]);
  });

  it("names several reasons of one line together, and the line a multi-line quoted field starts on", () => {
    const parsed = parseUsageFile('date,item,units\n"2026-11-01","a\nb",x\n2026-13-01,ok,1\n');
    expect(parsed).toEqual({
      ok: false,
      errors: [
        { line: 2, reason: "item contains a control character (U+000A); units must be a whole number 0 or more, got 'x'" },
        { line: 4, reason: "date must be a real day written YYYY-MM-DD, got '2026-13-01'" },
      ],
    });
  });

  it("names a control character in a header cell or a JSON field name by its code point, never echoing it", () => {
    const csv = parseUsageFile("date,item,units,co\u0000st\n2026-11-02,x,1,\n");
    expect(csv).toEqual({
      ok: false,
      errors: [{ line: 1, reason: "column 4 of the header contains a control character (U+0000): the header must be date,item,units,cost" }],
    });
    const json = parseUsageFile('[{"date":"2026-11-02","item":"x","units":1,"c\\u001bost":"1"}]');
    expect(json).toEqual({ ok: false, errors: [{ line: 1, reason: "a field name contains a control character (U+001B)" }] });
    expect(JSON.stringify([csv, json])).not.toMatch(/\\u0000|\\u001b/);
  });

  it("refuses a bad header, an empty file, too many rows and too many bytes", () => {
    expect(parseUsageFile("day,item,units\n2026-11-01,a,1\n")).toMatchObject({
      ok: false,
      errors: [
        { line: 1, reason: expect.stringContaining("unknown column 'day'") },
        { line: 1, reason: expect.stringContaining("no 'date' column") },
      ],
    });
    expect(parseUsageFile("")).toMatchObject({ ok: false, errors: [{ line: 1 }] });
    const many = ["date,item,units", ...Array.from({ length: MAX_FILE_ROWS + 1 }, (_, i) => `2026-11-01,i${i},1`)].join("\n");
    expect(parseUsageFile(many)).toMatchObject({
      ok: false,
      errors: [{ line: 0, reason: `the file has ${MAX_FILE_ROWS + 1} rows; at most ${MAX_FILE_ROWS}` }],
    });
    expect(parseUsageFile(`date,item,units\n${"x".repeat(5 * 1024 * 1024)}`)).toMatchObject({
      ok: false,
      errors: [{ line: 0, reason: expect.stringContaining("at most 5 MB") }],
    });
  });
});

describe("parseUsageFile: a FOCUS export", () => {
  const source = { timeZone: "UTC", currency: "USD" };
  const head = "ServiceName,ChargeDescription,ChargeCategory,BillingCurrency,BilledCost,ChargePeriodEnd,ChargePeriodStart";
  const row = (i: number) => `Vertex AI,SKU ${i},Usage,USD,0.01,2026-11-01T01:00:00Z,2026-11-01T00:00:00Z`;

  it("is told by its header (ChargePeriodStart and BilledCost), in any order, and read for the source", () => {
    expect(parseUsageFile(`${head}\n${row(1)}\n`, source)).toMatchObject({
      ok: true,
      rows: [{ day: "2026-11-01", item: "Vertex AI: SKU 1", units: 0, costMicros: 10_000 }],
    });
    // Without both, it is Ceilings' own file, and its header is refused as one.
    expect(parseUsageFile("ChargePeriodStart,ServiceName\n2026-11-01T00:00:00Z,x\n", source)).toMatchObject({
      ok: false,
      errors: [
        { line: 1, reason: expect.stringContaining("unknown column 'chargeperiodstart'") },
        { line: 1, reason: expect.stringContaining("unknown column 'servicename'") },
        { line: 1, reason: expect.stringContaining("no 'date' column") },
        { line: 1, reason: expect.stringContaining("no 'item' column") },
        { line: 1, reason: expect.stringContaining("no 'units' column") },
      ],
    });
  });

  it("keeps the 5 MB of every file, refused as a whole (more rows than a file may hold are more than 5 MB of FOCUS)", () => {
    const many = [head, ...Array.from({ length: MAX_FILE_ROWS + 1 }, (_, i) => row(i))].join("\n");
    expect(parseUsageFile(many, source)).toEqual({ ok: false, errors: [{ line: 0, reason: expect.stringContaining("at most 5 MB") }] });
    expect(parseUsageFile(`${head}\n${row(1)},${"x".repeat(5 * 1024 * 1024)}`, source)).toEqual({
      ok: false,
      errors: [{ line: 0, reason: expect.stringContaining("at most 5 MB") }],
    });
  });
});

describe("parseUsageFile: JSON", () => {
  it("reads an array or {rows}, numbers or strings, cost optional", () => {
    const rows = '[{"date":"2026-11-01","item":"sms","units":12,"cost":"0.0948"},{"date":"2026-11-01","item":"mms","units":"3"}]';
    expect(parseUsageFile(rows)).toMatchObject({
      ok: true,
      rows: [
        { day: "2026-11-01", item: "sms", units: 12, costMicros: 94_800 },
        { item: "mms", units: 3, costMicros: null },
      ],
    });
    expect(parseUsageFile(`{"rows":${rows}}`, { format: "json" })).toMatchObject({ ok: true, rows: [{ item: "sms" }, { item: "mms" }] });
  });

  it("refuses the whole file, naming each row by its 1-based index: duplicate keys, exponents, unknown fields", () => {
    const text = `[
      {"date":"2026-11-01","item":"a","units":1},
      {"date":"2026-11-01","item":"b","units":1,"units":900},
      {"date":"2026-11-01","item":"c","units":1e9},
      {"date":"2026-11-01","item":"d","units":1.5,"cost":-2},
      {"date":"2026-11-01","item":"e","units":1,"note":"x"},
      {"date":"2026-11-01","item":"a","units":2},
      "not a row"
    ]`;
    expect(parseUsageFile(text)).toEqual({
      ok: false,
      errors: [
        { line: 2, reason: 'duplicate key "units"' },
        { line: 3, reason: "units must be a whole number 0 or more, got '1e9'" },
        { line: 4, reason: "units must be a whole number 0 or more, got '1.5'; cost must be a plain decimal 0 or more such as 12.50, got '-2'" },
        { line: 5, reason: "unknown field 'note'" },
        { line: 6, reason: "duplicate of row 1: 2026-11-01 a appears twice" },
        { line: 7, reason: 'a row must be an object {"date","item","units","cost"}' },
      ],
    });
  });

  it("refuses JSON that does not parse, or is not rows, as the file as a whole", () => {
    expect(parseUsageFile('[{"date":')).toMatchObject({ ok: false, errors: [{ line: 0, reason: expect.stringContaining("not valid JSON") }] });
    expect(parseUsageFile('{"data":[]}')).toMatchObject({ ok: false, errors: [{ line: 0 }] });
    expect(parseUsageFile('{"rows":[],"rows":[]}')).toMatchObject({ ok: false, errors: [{ line: 0, reason: expect.stringContaining("duplicate key") }] });
  });
});
