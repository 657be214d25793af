import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { AccountView, CeilingBinding } from "@/lib/accounts/read";
import { AccountPageView, isEmptyAccount } from "./account-view";

// The account page renders from its prepared view alone: a fresh account says it has nothing, a
// blocked one says so, each limit says which source binds it, and the controls follow the role
// (each action checks the role again on the server).

const NOW = new Date("2026-03-10T12:00:00Z");
const TODAY = new Date("2026-03-10T00:00:00Z");
const TOMORROW = new Date("2026-03-11T00:00:00Z");

function ceiling(over: Partial<CeilingBinding> = {}): CeilingBinding {
  return {
    ceilingId: 7,
    endpointId: 3,
    endpointKey: "llm.chat",
    endpointName: "Chat",
    endpointArchived: false,
    unit: "tokens",
    currency: "USD",
    metric: "units",
    window: "utc_day",
    own: 50,
    planValue: null,
    override: null,
    binding: { value: 50, source: "ceiling" },
    span: { start: TODAY, end: TOMORROW },
    held: 0,
    settled: 0,
    used: 0,
    remaining: 50,
    last30: { spend: 0, windows: 0 },
    money30: 0,
    upperBound: false,
    ...over,
  };
}

function view(over: Partial<AccountView> = {}): AccountView {
  return {
    account: "acct_fresh",
    registered: false,
    firstSeenAt: null,
    plan: { id: 1, key: "default", name: "Default", isDefault: true, onDefault: true, setAt: null, setBy: null },
    blocked: null,
    since: new Date("2026-02-09T00:00:00Z"),
    ceilings: [ceiling()],
    budgets: [],
    refusals: [],
    reservations: [],
    apiKeys: [],
    ...over,
  };
}

const plans = [
  { key: "default", name: "Default", isDefault: true },
  { key: "pro", name: "Pro", isDefault: false },
];
const render = (v: AccountView, role: "viewer" | "operator" | "admin") =>
  renderToStaticMarkup(<AccountPageView view={v} canBlock={role !== "viewer"} isAdmin={role === "admin"} plans={role === "admin" ? plans : []} />);

describe("the account page", () => {
  it("says a fresh account has nothing yet, with every empty list in words", () => {
    const html = render(view(), "viewer");
    expect(isEmptyAccount(view())).toBe(true);
    expect(html).toContain('data-testid="account-nothing"');
    expect(html).toContain("This account has never been refused.");
    expect(html).toContain("This account has reserved nothing.");
    expect(html).toContain("No API key spends for this account.");
    expect(html).toContain("No budget is kept per account.");
    expect(html).toContain("the default plan: never assigned");
    expect(html).not.toContain('data-testid="account-controls"');
  });

  it("names the source that binds each limit", () => {
    const v = view({
      registered: true,
      firstSeenAt: NOW,
      plan: { id: 2, key: "pro", name: "Pro", isDefault: false, onDefault: false, setAt: NOW, setBy: "billing" },
      ceilings: [
        ceiling({ ceilingId: 1, planValue: 100, binding: { value: 100, source: "plan" } }),
        ceiling({ ceilingId: 2, override: { value: 7, reason: "ticket 12", updatedAt: NOW }, binding: { value: 7, source: "override" } }),
        ceiling({ ceilingId: 3, own: 0, binding: { value: 0, source: "kill" } }),
      ],
    });
    expect(isEmptyAccount(v)).toBe(false);
    const html = render(v, "viewer");
    expect(html).toContain("plan pro");
    expect(html).toContain("this account&#x27;s override");
    expect(html).toContain("killed (binds everyone at 0)");
    expect(html).toContain("ticket 12");
    expect(html).not.toContain('data-testid="account-nothing"');
  });

  it("shows a block, and Unblock to admins only; operators get Block on an unblocked account", () => {
    const blocked = view({ registered: true, blocked: { at: NOW, by: "ops@example.com", reason: "chargebacks" } });
    const asAdmin = render(blocked, "admin");
    expect(asAdmin).toContain('data-testid="account-blocked"');
    expect(asAdmin).toContain("chargebacks");
    expect(asAdmin).toContain('data-testid="account-unblock"');
    expect(asAdmin).toContain('data-testid="account-change-plan"');
    const asOperator = render(blocked, "operator");
    expect(asOperator).not.toContain('data-testid="account-unblock"');
    expect(asOperator).toContain("An admin can unblock this account.");
    expect(asOperator).not.toContain('data-testid="account-change-plan"');
    expect(render(view({ registered: true }), "operator")).toContain('data-testid="account-block"');
  });
});
