import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { detailChange, valueChange } from "./audit-table";

// The audit log's Value column for a catalog change: each field's before and after as people read them.
describe("detailChange", () => {
  it("shows a change of priced parts as their decimals, not as picos", () => {
    const details = {
      changes: {
        parts: {
          before: [{ name: "units", pricePico: 7_900_000_000 }],
          after: [
            { name: "input", pricePico: 2_500_000 },
            { name: "output", pricePico: 10_000_000 },
          ],
        },
      },
    };
    expect(detailChange({ action: "endpoint.update", details })).toBe("parts units 0.0079 → input 0.0000025, output 0.00001");
  });

  it("keeps numbers and other values as before", () => {
    expect(
      detailChange({ action: "endpoint.update", details: { changes: { perCallMax: { before: 1, after: 8000 }, name: { before: "a", after: "b" } } } }),
    ).toBe("perCallMax 1 → 8,000; name a → b");
  });
});

// The Value column of a change in money (a budget's, or a plan's value on one): money, not micros.
describe("valueChange", () => {
  const words = (e: Parameters<typeof valueChange>[0]) => renderToStaticMarkup(valueChange(e)).replace(/<[^>]+>/g, "");

  it("shows micros as money when the event names its currency, and counts otherwise", () => {
    expect(words({ previousValue: null, appliedValue: 5_000_000, details: { currency: "USD" } })).toBe("none → $5.00");
    expect(words({ previousValue: 40, appliedValue: 1000, details: { on: "email.send units/caller/utc_day" } })).toBe("40 → 1,000");
    expect(valueChange({ previousValue: null, appliedValue: null, details: null })).toBeNull();
  });

  it("keeps the exact amount of a value under a cent in reach", () => {
    expect(renderToStaticMarkup(valueChange({ previousValue: 2_000_000, appliedValue: 8_333, details: { currency: "USD" } }))).toContain(
      '<data value="0.008333" title="Exactly $0.008333" class="whitespace-nowrap">$0.01</data>',
    );
  });
});
