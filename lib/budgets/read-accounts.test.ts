import { describe, expect, it } from "vitest";
import { WINDOW_TOP, windowTopCandidates } from "./read-accounts";

// The proof behind topAccountsOver: an account outside every window's top cannot reach the answer.

const full = (window: number, first: { account: string; settled: number }[], rest: number) => [
  ...first.map((r) => ({ window, ...r })),
  ...Array.from({ length: WINDOW_TOP - first.length }, (_, i) => ({ window, account: `w${window}-small-${i}`, settled: rest })),
];

describe("window top candidates", () => {
  it("proves nothing is missed when the windows are not full", () => {
    const r = windowTopCandidates(
      [
        { window: 1, account: "a", settled: 5 },
        { window: 2, account: "b", settled: 3 },
      ],
      10,
    );
    expect(r).toEqual({ bound: 0, candidates: ["a", "b"], provable: true });
  });

  it("keeps the accounts that can still be first and drops the ones that cannot", () => {
    // Two full windows whose WINDOW_TOP-th settled 10: an unseen account settled at most 20.
    const tops = [...full(1, [{ account: "big", settled: 1000 }], 10), ...full(2, [{ account: "big", settled: 1000 }], 10)];
    const r = windowTopCandidates(tops, 1);
    expect(r.bound).toBe(20);
    expect(r.provable).toBe(true);
    expect(r.candidates).toEqual(["big"]);
  });

  it("says when money spread thin cannot be proved from the tops", () => {
    const tops = [...full(1, [], 10), ...full(2, [], 10)];
    const r = windowTopCandidates(tops, 1);
    // Each seen account has 10 and at most 20; an unseen one may have 20 too.
    expect(r.bound).toBe(20);
    expect(r.provable).toBe(false);
  });
});
