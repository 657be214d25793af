import { describe, expect, it } from "vitest";
import { chooseBucketMs } from "./chart";
import { csvCell } from "./csv";
import { filterParams, parseRefusalQuery } from "./filters";

describe("CSV cells", () => {
  it("quotes separators, quotes and line breaks", () => {
    expect(csvCell('say "no", twice')).toBe('"say ""no"", twice"');
    expect(csvCell("a\nb")).toBe('"a\nb"');
    expect(csvCell(null)).toBe("");
    expect(csvCell(42)).toBe("42");
  });

  it("defuses spreadsheet formulas but leaves numbers and phone numbers alone", () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("-2+3+cmd|' /C calc'!A0")).toBe("'-2+3+cmd|' /C calc'!A0");
    expect(csvCell("+14155554567")).toBe("+14155554567");
    expect(csvCell("+1******4567")).toBe("+1******4567");
    expect(csvCell("-5")).toBe("-5");
  });
});

describe("refusal query parsing", () => {
  it("reads filters and a cursor from search params, blanks as absent", () => {
    const parsed = parseRefusalQuery({ endpoint: "email.subscribe", gate: "", caller: " acct_1 ", before: "2025-06-10T11:50:00.123456Z_42" });
    expect(parsed).toEqual({
      ok: true,
      filters: { endpoint: "email.subscribe", caller: "acct_1" },
      position: { before: { at: "2025-06-10T11:50:00.123456Z", id: 42 } },
    });
  });

  it("names each invalid parameter", () => {
    const parsed = parseRefusalQuery({ gate: "bogus", from: "soon", before: "1_2" });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.join("\n")).toMatch(/gate:/);
    expect(parsed.errors.join("\n")).toMatch(/from:/);
    expect(parsed.errors.join("\n")).toMatch(/before: invalid page cursor/);
  });

  it("writes filters back as canonical params for links", () => {
    const parsed = parseRefusalQuery({ endpoint: "sms.reset", from: "2025-06-01T09:30", to: "2025-06-02" });
    if (!parsed.ok) throw new Error("expected valid filters");
    expect(filterParams(parsed.filters).toString()).toBe("endpoint=sms.reset&from=2025-06-01T09%3A30%3A00.000Z&to=2025-06-02T00%3A00%3A00.000Z");
  });

  it("chooses chart buckets from the range", () => {
    expect(chooseBucketMs(3_600_000)).toBe(5 * 60_000);
    expect(chooseBucketMs(7 * 86_400_000)).toBe(3 * 3_600_000);
    expect(chooseBucketMs(90 * 86_400_000)).toBe(86_400_000);
    expect(chooseBucketMs(400 * 86_400_000)).toBe(7 * 86_400_000);
  });
});
