import { describe, expect, it } from "vitest";
import { parseMoneyInput, moneyInputText, previewAdjustment } from "@/lib/limits/parse";
import { budgetSentence } from "./money";

describe("money typed by a person", () => {
  it.each([
    ["200", 200_000_000],
    ["200.00", 200_000_000],
    ["1.5", 1_500_000],
    [" 0.000001 ", 1],
    ["0", 0],
    ["9007199254.740991", Number.MAX_SAFE_INTEGER],
  ])("reads %j as %d micros, without a float in between", (raw, micros) => {
    expect(parseMoneyInput(raw)).toEqual({ ok: true, micros });
    expect(parseMoneyInput(moneyInputText(micros))).toEqual({ ok: true, micros });
  });

  it.each(["", "  ", "1e9", "500abc", "-5", "1,000", "$5", ".5", "5.", "0x10", "Infinity", "1.0000001", "9007199254.740992"])("refuses %j", (raw) => {
    const parsed = parseMoneyInput(raw, "value");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/^value /);
  });

  it("previews the clamp, the kill, the restore and the 5x retype", () => {
    const base = { current: 10_000_000, valueBeforeKill: null, min: 1_000_000, max: 100_000_000, currency: "USD" };
    expect(previewAdjustment({ ...base, raw: "500" })).toMatchObject({
      ok: true,
      applied: 100_000_000,
      clamped: "max",
      needsConfirmation: true,
      message: expect.stringContaining("you typed $500.00; $100.00 will apply, the maximum"),
    });
    expect(previewAdjustment({ ...base, raw: "49.99" })).toMatchObject({ kind: "raise", needsConfirmation: false });
    expect(previewAdjustment({ ...base, raw: "0" })).toMatchObject({ kind: "kill" });
    expect(previewAdjustment({ ...base, current: 0, valueBeforeKill: 10_000_000, raw: "10" })).toMatchObject({
      kind: "restore",
      needsConfirmation: false,
    });
    expect(previewAdjustment({ ...base, raw: "0.5" })).toMatchObject({ applied: 1_000_000, clamped: "min", kind: "lower" });
  });

  it("says a killed budget refuses everything", () => {
    expect(budgetSentence({ scope: "account", window: "utc_day", billingDay: 1, value: 0, currency: "USD", members: ["a", "b"] })).toBe(
      "nothing for each account across a and b: killed, every call on them is refused",
    );
  });
});
