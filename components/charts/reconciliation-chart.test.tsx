import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ReconDay, ReconSeries } from "@/lib/reconciliation/read";
import { ReconciliationChart, reconRows, reconSummary } from "./reconciliation-chart";

// The chart says when there is nothing to compare, and carries its numbers in words (the drawing
// itself is sized by the browser, so it is the e2e's to see).

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replaceAll("&#x27;", "'")
    .replace(/\s+/g, " ");

function series(days: Partial<ReconDay>[]): ReconSeries {
  return {
    unit: "tokens",
    currency: "USD",
    timeZone: "UTC",
    days: days.map((d, i) => ({
      day: `2026-03-0${i + 1}`,
      billedUnits: null,
      billedMicros: null,
      chargedUnits: null,
      chargedMicros: null,
      drift: null,
      held: 0,
      final: true,
      ...d,
    })),
  };
}

describe("reconciliation chart", () => {
  it("without a source nor a compared day, an empty state that says where to connect one", () => {
    const s = series([{}]);
    const html = renderToStaticMarkup(<ReconciliationChart ranges={{ 30: s, 90: s }} hasSource={false} />);
    expect(html).toContain('data-testid="reconciliation-chart"');
    expect(html).toContain('data-state="empty"');
    expect(text(html)).toContain("No source reports this endpoint's usage yet: connect one on the Reconciliation page");
    expect(html).toContain('href="/reconciliation"');
  });

  it("with a source: drawn, with the numbers in a table and days past the threshold said in words", () => {
    const drift = { diffUnits: 100, diffMicros: 1_000_000, percent: 10, over: true, direction: "billed_more" as const };
    const s = series([{}, { billedUnits: 1000, billedMicros: 10_000_000, chargedUnits: 900, chargedMicros: 9_000_000, drift }]);
    const html = renderToStaticMarkup(<ReconciliationChart ranges={{ 30: s, 90: s }} hasSource />);
    expect(html).toContain('data-state="drawn"');
    expect(html).toContain('data-range="30"');
    const words = text(html);
    expect(words).toContain("billed by the provider");
    expect(words).toContain("charged by Ceilings");
    expect(words).toContain("1 of the last 2 days compared (UTC days); 1 past the threshold.");
    expect(words).toContain("Mar 2 $10.00 $9.00 +10.0 %, past the threshold");
    expect(words).toContain("Mar 1 not reported not compared not compared");
  });

  it("rows leave a gap in both lines on a day nothing compared; the summary counts compared days", () => {
    const s = series([
      {},
      {
        billedUnits: 4,
        billedMicros: 40,
        chargedUnits: 4,
        chargedMicros: 40,
        drift: { diffUnits: 0, diffMicros: 0, percent: 0, over: false, direction: "even" },
      },
    ]);
    expect(reconRows(s.days, "units").map((r) => [r.billed, r.charged, r.over])).toEqual([
      [null, null, false],
      [4, 4, false],
    ]);
    expect(reconSummary(s)).toBe("1 of the last 2 days compared (UTC days); none past the threshold.");
    expect(reconSummary({ ...series([{}]), timeZone: "America/New_York" })).toBe(
      "No day of the last 1 has the provider's numbers yet (days in America/New_York, the provider's).",
    );
  });
});

describe("reconciliation chart mode", () => {
  it("starts in money when there is money, in units when the endpoint is priced at zero", () => {
    const money = series([{ billedUnits: 1, billedMicros: 10, chargedUnits: 1, chargedMicros: 10 }]);
    expect(renderToStaticMarkup(<ReconciliationChart ranges={{ 30: money, 90: money }} hasSource />)).toContain('data-mode="money"');
    const free = series([{ billedUnits: 1000, billedMicros: 0, chargedUnits: 900 }]);
    const html = renderToStaticMarkup(<ReconciliationChart ranges={{ 30: free, 90: free }} hasSource />);
    expect(html).toContain('data-mode="units"');
    expect(text(html)).toContain("Mar 1 1,000 tokens 900 tokens");
  });
});
