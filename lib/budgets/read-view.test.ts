import { describe, expect, it } from "vitest";
import { MINUTE_MS } from "@/lib/time";
import { budgetState, crossedThreshold, windowProgress } from "./read-view";

const start = new Date("2026-03-10T00:00:00Z");
const end = new Date("2026-03-11T00:00:00Z");
const at = (ms: number) => new Date(start.getTime() + ms);

describe("budget state, pace and projection", () => {
  it("crosses a threshold only when spend reaches it exactly, in integers", () => {
    expect(crossedThreshold(79_999_999, 100_000_000, [50, 80, 100])).toBe(50);
    expect(crossedThreshold(80_000_000, 100_000_000, [50, 80, 100])).toBe(80);
    expect(crossedThreshold(100_000_001, 100_000_000, [50, 80, 100])).toBe(100);
    expect(crossedThreshold(1, 3, [34])).toBeNull();
    expect(crossedThreshold(5, 0, [50])).toBeNull();
    expect(crossedThreshold(5, 10, [])).toBeNull();
  });

  it("archived wins over killed, killed over alerting", () => {
    expect(budgetState({ value: 0, killedAt: start, archivedAt: start, crossed: 100 })).toBe("archived");
    expect(budgetState({ value: 0, killedAt: null, archivedAt: null, crossed: 100 })).toBe("killed");
    expect(budgetState({ value: 10, killedAt: start, archivedAt: null, crossed: null })).toBe("killed");
    expect(budgetState({ value: 10, killedAt: null, archivedAt: null, crossed: 50 })).toBe("alerting");
    expect(budgetState({ value: 10, killedAt: null, archivedAt: null, crossed: null })).toBe("live");
  });

  it("projects spend / elapsed, but not in the first 15 minutes", () => {
    expect(windowProgress({ start, end, now: at(14 * MINUTE_MS), spend: 10, value: 960 })).toEqual({ elapsed: 14 / 1440, pace: 9, projection: null });
    expect(windowProgress({ start, end, now: at(15 * MINUTE_MS), spend: 10, value: 960 }).projection).toBe(960);
    // After the window (a page rendered at its very end) the fraction stays 1.
    expect(windowProgress({ start, end, now: at(2 * 86_400_000), spend: 10, value: 960 })).toEqual({ elapsed: 1, pace: 960, projection: 10 });
  });
});
