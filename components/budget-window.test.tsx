import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { BudgetOverview } from "@/lib/budgets";
import { BudgetWindow } from "./budget-window";
import { BudgetsCompact } from "./budgets-compact";

// The budget views render from prepared data alone: an empty window, a per-account budget and a
// killed one each say what they are in words (the charts' drawings are sized by the browser).

const NOW = new Date("2026-03-10T12:00:00Z");
const USD = 1_000_000;

function budget(over: Partial<BudgetOverview> = {}): BudgetOverview {
  return {
    id: 1,
    key: "llm.all",
    name: "All LLM calls",
    currency: "USD",
    scope: "global",
    window: "utc_day",
    billingDay: 1,
    value: 200 * USD,
    valueBeforeKill: null,
    minValue: 0,
    maxValue: 1000 * USD,
    defaultValue: 200 * USD,
    alertThresholds: [50, 80, 100],
    killedAt: null,
    killedBy: null,
    archivedAt: null,
    archivedBy: null,
    version: 1,
    span: { start: new Date("2026-03-10T00:00:00Z"), end: new Date("2026-03-11T00:00:00Z") },
    held: 0,
    settled: 0,
    spend: 0,
    accounts: 0,
    busiest: null,
    ratio: 0,
    crossed: null,
    state: "live",
    progress: { elapsed: 0.5, pace: 100 * USD, projection: 0 },
    members: [{ endpointId: 1, key: "llm.gpt-4o", name: "GPT-4o", archived: false, money: 0, reservations: 0 }],
    topAccounts: [],
    ...over,
  };
}

// An amount's <data> is inline: it adds no space, as in the browser.
const text = (html: string) =>
  html
    .replace(/<\/?data[^>]*>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replaceAll("&#x27;", "'")
    .replaceAll("&lt;", "<")
    .replace(/\s+/g, " ");

describe("budget views", () => {
  it("shows a budget with no spend yet", () => {
    const html = text(renderToStaticMarkup(<BudgetWindow budget={budget()} now={NOW} />));
    expect(html).toContain("$0.00 of $200.00");
    expect(html).toContain("No member has spent in this window yet.");
    expect(html).toContain("Even pace by now: $100.00.");
  });

  it("shows every amount of the bar in cents, a remainder under a cent as such, the exact in reach", () => {
    const b = budget({ value: USD, settled: 956_109, held: 40_000, spend: 996_109 });
    const html = renderToStaticMarkup(<BudgetWindow budget={b} now={NOW} />);
    expect(text(html)).toContain("$1.00 of $1.00 · $0.04 held · < $0.01 remaining");
    expect(html).toContain('title="Exactly $0.003891"');
    expect(html).toContain('aria-label="Spend of llm.all: $0.96 settled, $0.04 held, &lt; $0.01 remaining of $1.00"');
  });

  it("says a per-account budget's value is each account's, and lists its top accounts", () => {
    const b = budget({
      scope: "account",
      value: 2 * USD,
      spend: 5 * USD,
      settled: 5 * USD,
      accounts: 3,
      busiest: { account: "acct-9", held: 0, settled: 1_500_000, spend: 1_500_000, value: 2 * USD, projection: 3 * USD },
      topAccounts: [
        { account: "acct-9", held: 0, settled: 1_500_000, spend: 1_500_000, value: 2 * USD },
        { account: "acct-0", held: 0, settled: 10, spend: 10, value: 0 },
      ],
    });
    const html = text(renderToStaticMarkup(<BudgetWindow budget={b} now={NOW} />));
    expect(html).toContain("$5.00 spent or held by 3 accounts together");
    expect(html).toContain("is each account's");
    expect(html).toContain("Nearest its value: acct-9 , $1.50 of $2.00, projected $3.00");
    expect(html).toContain("Blocked by an override of 0");
    const compact = text(renderToStaticMarkup(<BudgetsCompact budgets={[b]} label="Budgets" />));
    expect(compact).toContain("at most $2.00 per UTC day for each account");
  });

  it("says a killed budget refuses every call and what restore puts back", () => {
    const b = budget({ value: 0, valueBeforeKill: 150 * USD, killedAt: NOW, killedBy: "ops@test.local", state: "killed", ratio: 1 });
    const html = text(renderToStaticMarkup(<BudgetWindow budget={b} now={NOW} />));
    expect(html).toContain("by ops@test.local: every call on its members is refused. Restore puts back $150.00.");
    expect(text(renderToStaticMarkup(<BudgetsCompact budgets={[b]} label="Budgets" />))).toContain("killed");
  });
});
