import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ExactSpend } from "./exact-spend";

// A budget's page writes its open window to the micro, where the rest of the page shows cents.

const words = (html: string) => html.replace(/<[^>]+>/g, "");

describe("ExactSpend", () => {
  it("writes settled, held and left to the micro", () => {
    const html = renderToStaticMarkup(<ExactSpend budget={{ settled: 956_109, held: 10_000, value: 974_442, currency: "USD", scope: "global" }} />);
    expect(words(html)).toBe("$0.956109 settled · $0.010000 held · $0.008333 left of $0.974442");
    expect(html).toContain('<data value="0.008333">$0.008333</data>');
  });

  it("says by how much an overrun passed the value, not that nothing is left", () => {
    const html = renderToStaticMarkup(<ExactSpend budget={{ settled: 1_000_001, held: 0, value: 1_000_000, currency: "USD", scope: "global" }} />);
    expect(words(html)).toContain("$0.000001 above the value of $1.000000");
  });

  it("has no left for a per-account budget, whose value is each account's", () => {
    const html = renderToStaticMarkup(<ExactSpend budget={{ settled: 5, held: 0, value: 2_000_000, currency: "USD", scope: "account" }} />);
    expect(words(html)).toBe("$0.000005 settled · $0.000000 held, every account together");
  });
});
