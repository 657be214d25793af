import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { WhatIfResult } from "@/lib/changes/what-if";
import { WhatIfNumbers } from "./what-if-numbers";

// The panel's numbers render from the action's answer alone: "no history" for an endpoint that
// has none, and the totals, days and accounts otherwise, each under its test id.

const day = (i: number, refused = 0) => ({ day: `2026-11-${String(i + 1).padStart(2, "0")}`, granted: 5, refused, refusedMoney: refused * 1_000_000 });
function result(days: number, refusedOn: number): WhatIfResult {
  const list = Array.from({ length: days }, (_, i) => day(i, i === refusedOn ? 3 : 0));
  return {
    days: list,
    refused: list.reduce((n, d) => n + d.refused, 0),
    refusedMoney: list.reduce((n, d) => n + d.refusedMoney, 0),
    currency: "USD",
    topAccounts: refusedOn >= 0 ? [{ account: "acct_big", refused: 3, refusedMoney: 3_000_000 }] : [],
    ms: 1,
  };
}

describe("WhatIfNumbers", () => {
  it("says there is no history when no grant was made", () => {
    const empty = (n: number): WhatIfResult => ({
      days: Array.from({ length: n }, (_, i) => ({ ...day(i), granted: 0 })),
      refused: 0,
      refusedMoney: 0,
      currency: "USD",
      topAccounts: [],
      ms: 0,
    });
    const html = renderToStaticMarkup(<WhatIfNumbers data={{ d7: empty(7), d30: empty(30) }} />);
    expect(html).toContain("No history: nothing would have been refused.");
    for (const id of ["what-if-refused-7", "what-if-refused-30", "what-if-top-accounts"]) expect(html).toContain(`data-testid="${id}"`);
  });

  it("shows the refused calls, their money and the accounts hit hardest", () => {
    const html = renderToStaticMarkup(<WhatIfNumbers data={{ d7: result(7, 6), d30: result(30, 29) }} />);
    expect(html).toMatch(/data-testid="what-if-refused-7"[^>]*>3 calls refused, <data value="3.000000"[^>]*>\$3\.00</);
    expect(html).toMatch(/data-testid="what-if-refused-30"[^>]*>3 calls refused, <data value="3.000000"[^>]*>\$3\.00</);
    expect(html).toContain("acct_big");
    // Phone width: the day table scrolls inside its box instead of widening the page.
    expect(html).toContain("overflow-x-auto");
  });
});
