import { describe, expect, it } from "vitest";
import { detailChange } from "./audit-table";

// The audit log's Value column for a catalog change: each field's before and after as people read them.
describe("detailChange", () => {
  it("shows a change of priced parts as their decimals, not as picos", () => {
    const details = { changes: { parts: { before: [{ name: "units", pricePico: 7_900_000_000 }], after: [{ name: "input", pricePico: 2_500_000 }, { name: "output", pricePico: 10_000_000 }] } } };
    expect(detailChange({ action: "endpoint.update", details })).toBe("parts units 0.0079 → input 0.0000025, output 0.00001");
  });

  it("keeps numbers and other values as before", () => {
    expect(detailChange({ action: "endpoint.update", details: { changes: { perCallMax: { before: 1, after: 8000 }, name: { before: "a", after: "b" } } } })).toBe("perCallMax 1 → 8,000; name a → b");
  });
});
