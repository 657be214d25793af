import { describe, expectTypeOf, it } from "vitest";
import type { BudgetScope, BudgetWindow, CeilingMetric, CeilingScope, CeilingWindow, Gate } from "@/lib/vocabulary";
import type { BudgetRemaining, CeilingRemaining, CeilingStatus, Refused } from "./types";

// The client ships without the app, so it spells the vocabulary out; these checks (run by tsc)
// keep its words the server's.
describe("the client's vocabulary", () => {
  it("names the server's gates, metrics, scopes and windows", () => {
    expectTypeOf<Refused["gate"]>().toEqualTypeOf<Gate>();
    expectTypeOf<CeilingRemaining["metric"]>().toEqualTypeOf<CeilingMetric>();
    expectTypeOf<CeilingRemaining["scope"]>().toEqualTypeOf<CeilingScope>();
    expectTypeOf<CeilingRemaining["window"]>().toEqualTypeOf<CeilingWindow>();
    expectTypeOf<CeilingStatus["metric"]>().toEqualTypeOf<CeilingMetric>();
    expectTypeOf<CeilingStatus["scope"]>().toEqualTypeOf<CeilingScope>();
    expectTypeOf<CeilingStatus["window"]["kind"]>().toEqualTypeOf<CeilingWindow>();
    expectTypeOf<BudgetRemaining["scope"]>().toEqualTypeOf<BudgetScope>();
    expectTypeOf<BudgetRemaining["window"]>().toEqualTypeOf<BudgetWindow>();
  });
});
