import { describe, expect, it } from "vitest";
import type { BudgetStop } from "./read-stops";
import { budgetStopDetail, budgetStopHeadline } from "./stop-words";

const now = new Date("2026-12-03T09:00:00Z");
const base: BudgetStop = {
  budgetId: 1,
  budget: "llm-daily",
  currency: "USD",
  reason: "exhausted",
  killedAt: null,
  killedBy: null,
  value: 200_000_000,
  settled: 200_000_000,
  held: 0,
  until: new Date("2026-12-04T00:00:00Z"),
  heldMayFree: false,
};

describe("a budget stopping an endpoint, in words", () => {
  it("names a kill, and says it lasts until a restore", () => {
    const killed: BudgetStop = { ...base, reason: "killed", value: 0, killedAt: new Date("2026-12-03T08:57:00Z"), killedBy: "ops@example.com" };
    expect(budgetStopHeadline(killed, now)).toBe("Stopped by budget llm-daily (killed)");
    expect(budgetStopDetail(killed, now)).toBe("Killed 3 min ago by ops@example.com: every call is refused (gate budget) until the budget is restored.");
  });

  it("names a used-up window with its end, and held money that may come back", () => {
    expect(budgetStopHeadline(base, now)).toBe("Stopped by budget llm-daily (exhausted until 00:00 UTC)");
    expect(budgetStopDetail(base, now)).toBe("$200.00 of $200.00 spent or held this window: every call that costs money is refused until the window ends.");
    const held = { ...base, settled: 150_000_000, held: 50_000_000, heldMayFree: true };
    expect(budgetStopHeadline(held, now)).toBe("Stopped by budget llm-daily (full until 00:00 UTC)");
    expect(budgetStopDetail(held, now)).toContain("unless held reservations settle lower or are released");
    const monthly = { ...base, until: new Date("2026-12-15T00:00:00Z") };
    expect(budgetStopHeadline(monthly, now)).toBe("Stopped by budget llm-daily (exhausted until Dec 15, 00:00 UTC)");
  });
});
