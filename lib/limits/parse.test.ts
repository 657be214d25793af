import { describe, expect, it } from "vitest";
import { clampToBounds, parseLimitInput, previewAdjustment } from "@/lib/limits/parse";

describe("parseLimitInput", () => {
  it.each([
    ["1e9", "limit must be a whole number, got '1e9'"],
    ["500abc", "limit must be a whole number, got '500abc'"],
    ["12.5", "limit must be a whole number, got '12.5'"],
    ["-5", "limit must be a whole number of 0 or more, got '-5'"],
    ["", "limit is required: type a whole number such as 100"],
    [" ", "limit is required: type a whole number such as 100"],
    ["0x10", "limit must be a whole number, got '0x10'"],
    ["1,000", "limit must be a whole number, got '1,000'"],
    ["+5", "limit must be a whole number, got '+5'"],
    ["Infinity", "limit must be a whole number, got 'Infinity'"],
    ["9007199254740992", "limit must be at most 9,007,199,254,740,991, got '9007199254740992'"],
  ])("rejects %j", (raw, error) => {
    expect(parseLimitInput(raw)).toEqual({ ok: false, error });
  });

  it.each([
    ["0", 0],
    ["100", 100],
    [" 150 ", 150],
    ["007", 7],
    ["9007199254740991", Number.MAX_SAFE_INTEGER],
  ])("accepts %j", (raw, value) => {
    expect(parseLimitInput(raw)).toEqual({ ok: true, value });
  });

  it("names the field in its message", () => {
    expect(parseLimitInput("x", "maximum")).toEqual({ ok: false, error: "maximum must be a whole number, got 'x'" });
  });
});

describe("clampToBounds", () => {
  const bounds = { min: 10, max: 150 };
  it.each([
    [0, 0, null],
    [5, 10, "min"],
    [10, 10, null],
    [100, 100, null],
    [150, 150, null],
    [1000, 150, "max"],
  ])("%d → %d (%s)", (value, applied, clamped) => {
    expect(clampToBounds(value, bounds)).toEqual({ applied, clamped });
  });
});

describe("previewAdjustment", () => {
  const ceiling = { current: 100, valueBeforeKill: null, min: 10, max: 150 };

  it("shows the clamp before saving", () => {
    const p = previewAdjustment({ ...ceiling, raw: "1000" });
    expect(p).toMatchObject({ ok: true, typed: 1000, applied: 150, clamped: "max", kind: "raise", needsConfirmation: false });
    expect(p.ok && p.message).toContain("you typed 1,000; 150 will apply, the maximum");
  });

  it("clamps up to the minimum", () => {
    const p = previewAdjustment({ ...ceiling, raw: "3" });
    expect(p).toMatchObject({ ok: true, applied: 10, clamped: "min", kind: "lower" });
    expect(p.ok && p.message).toContain("you typed 3; 10 will apply, the minimum");
  });

  it("passes a parse error through", () => {
    expect(previewAdjustment({ ...ceiling, raw: "12.5" })).toEqual({ ok: false, error: "limit must be a whole number, got '12.5'" });
  });

  it("treats 0 as a kill whatever the minimum", () => {
    expect(previewAdjustment({ ...ceiling, raw: "0" })).toMatchObject({ ok: true, applied: 0, kind: "kill", clamped: null });
  });

  it("asks to retype a raise of 5x or more, not less", () => {
    const wide = { ...ceiling, current: 20, max: 1000 };
    expect(previewAdjustment({ ...wide, raw: "99" })).toMatchObject({ kind: "raise", needsConfirmation: false });
    expect(previewAdjustment({ ...wide, raw: "100" })).toMatchObject({ kind: "raise", needsConfirmation: true });
    expect(previewAdjustment({ ...wide, raw: "5" })).toMatchObject({ kind: "lower", needsConfirmation: false });
  });

  it("judges the 5x on the applied value, after the clamp", () => {
    // Typing 10,000 on a ceiling of 100 with max 150 applies 150: a 1.5x raise, no retype needed.
    expect(previewAdjustment({ ...ceiling, raw: "10000" })).toMatchObject({ applied: 150, needsConfirmation: false });
  });

  it("treats a value on a killed ceiling as a restore, compared with the value before the kill", () => {
    const killed = { current: 0, valueBeforeKill: 100, min: 10, max: 1000 };
    expect(previewAdjustment({ ...killed, raw: "100" })).toMatchObject({ kind: "restore", needsConfirmation: false });
    expect(previewAdjustment({ ...killed, raw: "500" })).toMatchObject({ kind: "restore", needsConfirmation: true });
  });

  it("reports an unchanged value", () => {
    expect(previewAdjustment({ ...ceiling, raw: "100" })).toMatchObject({ kind: "unchanged" });
    expect(previewAdjustment({ ...ceiling, current: 150, raw: "999" })).toMatchObject({ kind: "unchanged", clamped: "max" });
  });
});
