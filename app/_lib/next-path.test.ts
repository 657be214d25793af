import { describe, expect, it } from "vitest";
import { safeNextPath } from "./next-path";

describe("safeNextPath", () => {
  it("keeps same-site paths with their query", () => {
    expect(safeNextPath("/endpoints/email.subscribe?tab=audit")).toBe("/endpoints/email.subscribe?tab=audit");
  });

  it("refuses anything a browser could read as another site", () => {
    for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example", "evil", "", undefined, ["/a"], "/a\nb"]) {
      expect(safeNextPath(bad)).toBe("/");
    }
  });

  it("never loops back to the login page or into the API", () => {
    expect(safeNextPath("/login?next=/")).toBe("/");
    expect(safeNextPath("/api/auth/signout")).toBe("/");
  });
});
