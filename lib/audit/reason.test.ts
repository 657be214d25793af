import { InputError } from "@/lib/errors";
import { describe, expect, it } from "vitest";
import { requireCatalogReason } from "@/lib/limits/errors";
import { optionalReason, requireReason } from "@/lib/ceilings/errors";
import { readReason } from "./reason";

describe("one rule for the reason an audited change gives", () => {
  it("trims, and reads blank as none, which only a required reason refuses", () => {
    expect(readReason("  runaway loop ", true)).toEqual({ ok: true, text: "runaway loop" });
    expect(readReason(" \t", false)).toEqual({ ok: true, text: null });
    expect(readReason(undefined, true)).toMatchObject({ ok: false, problem: { code: "reason_required" } });
  });

  it("refuses a reason the log could not show as typed, in every domain alike", () => {
    for (const bad of ["x".repeat(501), "oops\u0000", "line\u001b[2J", "a\u007f"]) {
      expect(readReason(bad, false)).toMatchObject({ ok: false, problem: { code: "invalid_input" } });
      // One input error whatever the domain, pointing at the reason field.
      for (const read of [() => requireReason(bad), () => optionalReason(bad), () => requireCatalogReason(bad)]) {
        expect(read).toThrow(InputError);
        expect(() => read()).toThrow(expect.objectContaining({ problems: [expect.objectContaining({ path: "reason" })] }));
      }
    }
  });
});
