import { describe, expect, it } from "vitest";
import { checkRole } from "./guards";

const viewer = { id: 1, email: "v@x.io", role: "viewer" as const };
const admin = { id: 2, email: "a@x.io", role: "admin" as const };

describe("checkRole", () => {
  it("asks for sign-in when there is no session", () => {
    expect(checkRole(null, "viewer")).toEqual({ ok: false, code: "unauthenticated", error: "Sign in required" });
  });

  it("names the role that fell short", () => {
    expect(checkRole(viewer, "operator")).toEqual({ ok: false, code: "forbidden", error: "Your role (viewer) cannot do this" });
    expect(checkRole(viewer, "admin")).toEqual({ ok: false, code: "forbidden", error: "Your role (viewer) cannot do this" });
  });

  it("lets a high enough role through", () => {
    expect(checkRole(viewer, "viewer")).toEqual({ ok: true, staff: viewer });
    expect(checkRole(admin, "operator")).toEqual({ ok: true, staff: admin });
  });
});
