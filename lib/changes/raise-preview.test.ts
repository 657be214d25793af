import { describe, expect, it } from "vitest";
import { valueNeedsApproval } from "./raise-preview";

describe("valueNeedsApproval, which buttons an edit form offers", () => {
  const inForce = { current: 100, valueBeforeKill: null, defaultValue: 50 };
  it("asks for a value above the one in force, not for a lower, equal or 0", () => {
    expect(valueNeedsApproval(101, inForce)).toBe(true);
    expect(valueNeedsApproval(100, inForce)).toBe(false);
    expect(valueNeedsApproval(99, inForce)).toBe(false);
    expect(valueNeedsApproval(0, inForce)).toBe(false);
  });
  it("on a killed value, compares with the value from before the kill (else the default)", () => {
    const killed = { current: 0, valueBeforeKill: 200, defaultValue: 50 };
    expect(valueNeedsApproval(200, killed)).toBe(false);
    expect(valueNeedsApproval(150, killed)).toBe(false);
    expect(valueNeedsApproval(201, killed)).toBe(true);
    expect(valueNeedsApproval(60, { current: 0, valueBeforeKill: null, defaultValue: 50 })).toBe(true);
  });
});
