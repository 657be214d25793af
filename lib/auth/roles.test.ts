import { describe, expect, it } from "vitest";
import { hasRole, isRole, roles } from "./roles";

describe("hasRole", () => {
  const cases: [actual: (typeof roles)[number], min: (typeof roles)[number], allowed: boolean][] = [
    ["viewer", "viewer", true],
    ["viewer", "operator", false],
    ["viewer", "admin", false],
    ["operator", "viewer", true],
    ["operator", "operator", true],
    ["operator", "admin", false],
    ["admin", "viewer", true],
    ["admin", "operator", true],
    ["admin", "admin", true],
  ];
  it.each(cases)("%s meets %s: %s", (actual, min, allowed) => {
    expect(hasRole(actual, min)).toBe(allowed);
  });
});

describe("isRole", () => {
  it("accepts exactly the three roles", () => {
    for (const r of roles) expect(isRole(r)).toBe(true);
    for (const v of ["Admin", "root", "", null, undefined, 1]) expect(isRole(v)).toBe(false);
  });
});
