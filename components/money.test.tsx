import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Money } from "./money";

// An amount reads at the currency's minor digits and keeps its exact micros in reach: the title
// for a pointer and a screen reader, the value for machines.

describe("Money", () => {
  it("shows cents and carries the exact amount", () => {
    expect(renderToStaticMarkup(<Money micros={956_109} currency="USD" />)).toBe(
      '<data value="0.956109" title="Exactly $0.956109" class="whitespace-nowrap">$0.96</data>',
    );
  });

  it("never reads $0.00 for an amount that is not 0", () => {
    const html = renderToStaticMarkup(<Money micros={4_999} currency="USD" className="font-medium" />);
    expect(html).toContain('class="whitespace-nowrap font-medium"');
    expect(html).toContain('title="Exactly $0.004999"');
    expect(html).toContain(">&lt; $0.01</data>");
  });

  it("uses the currency's own digits", () => {
    expect(renderToStaticMarkup(<Money micros={12_345_678_901n} currency="JPY" />)).toContain(
      'value="12345.678901" title="Exactly ¥12,345.678901" class="whitespace-nowrap">¥12,346<',
    );
  });
});
