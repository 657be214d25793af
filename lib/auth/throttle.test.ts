import { describe, expect, it } from "vitest";
import { decideAttempt, defaultThrottlePolicy, failureDelayMs, isOverLimit, throttleKeys } from "./throttle";

const policy = { maxFailures: 5, windowMs: 900_000, baseDelayMs: 250, maxDelayMs: 4_000 };

describe("throttle policy", () => {
  it("allows five attempts per window and refuses the sixth", () => {
    expect(defaultThrottlePolicy.maxFailures).toBe(5);
    expect(defaultThrottlePolicy.windowMs).toBe(15 * 60_000);
    expect([1, 2, 3, 4, 5].map((n) => isOverLimit(n, policy))).toEqual([false, false, false, false, false]);
    expect(isOverLimit(6, policy)).toBe(true);
  });

  it("doubles the delay with each failure up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((n) => failureDelayMs(n, policy))).toEqual([0, 250, 500, 1000, 2000, 4000, 4000, 4000]);
  });

  it("counts against the account and the address, in a fixed order", () => {
    expect(throttleKeys("a@x.io", "10.0.0.1")).toEqual(["account:a@x.io", "address:10.0.0.1"]);
    // Without an address there is no shared bucket every such request would fall into.
    expect(throttleKeys("a@x.io", null)).toEqual(["account:a@x.io"]);
  });

  it("refuses an account past its limit only to an address with failures of its own", () => {
    // address counts include this attempt: 1 means no earlier failure from there.
    expect(decideAttempt({ account: 50, address: 1 }, policy)).toEqual({ refuse: false, delayMs: 4000 });
    expect(decideAttempt({ account: 50, address: null }, policy)).toEqual({ refuse: false, delayMs: 4000 });
    expect(decideAttempt({ account: 50, address: 2 }, policy).refuse).toBe(true);
    expect(decideAttempt({ account: 1, address: 6 }, policy).refuse).toBe(true);
    expect(decideAttempt({ account: 1, address: 1 }, policy)).toEqual({ refuse: false, delayMs: 250 });
  });
});
