// What saving a plan value would do, in words, before anything is saved: pure, shared by the server
// (which decides) and the plan page's form (which previews). No database, no React.

import { parseMoneyInput, clampToBounds, CONFIRM_RAISE_FACTOR, parseLimitInput, type Clamp } from "@/lib/limits/parse";
import { formatCount, formatMoney } from "@/lib/format";

/** A per-caller ceiling counts units or calls; a per-account budget counts money (micros). */
export type PlanValueKind = { kind: "count" } | { kind: "money"; currency: string };

export type PlanValuePreviewParams = {
  raw: string;
  of: PlanValueKind;
  /** The plan's value now; null: it sets none (the ceiling's or budget's own value binds). */
  previous: number | null;
  /** The ceiling's or budget's own value (0 when killed) and the value a restore puts back. */
  own: number;
  ownBeforeKill: number | null;
  min: number;
  max: number;
};

export type PlanValuePreview =
  | { ok: false; error: string }
  | { ok: true; typed: number; applied: number; clamped: Clamp; unchanged: boolean; needsConfirmation: boolean; base: number; message: string };

/** The input as typed, read by the rule of its kind: whole numbers for a ceiling, money for a budget. */
export function parsePlanValue(raw: string, of: PlanValueKind): { ok: true; value: number } | { ok: false; error: string } {
  if (of.kind === "count") return parseLimitInput(raw, "value");
  const parsed = parseMoneyInput(raw, "value");
  return parsed.ok ? { ok: true, value: parsed.micros } : parsed;
}

/**
 * What binds the plan's accounts before the change: the plan's value, else the ceiling's (or the
 * budget's) own, or the value it had before a kill. A raise to 5x or more of that, or any raise
 * from 0, is typed twice, as a ceiling's own raise is (lib/limits/parse.ts previewAdjustment).
 */
export function previewPlanValue(p: PlanValuePreviewParams): PlanValuePreview {
  const parsed = parsePlanValue(p.raw, p.of);
  if (!parsed.ok) return parsed;
  const typed = parsed.value;
  const { applied, clamped } = clampToBounds(typed, { min: p.min, max: p.max });
  const base = p.previous ?? (p.own > 0 ? p.own : (p.ownBeforeKill ?? 0));
  const unchanged = p.previous === applied;
  const needsConfirmation = !unchanged && applied > base && (base === 0 || applied >= base * CONFIRM_RAISE_FACTOR);
  const show = (v: number) => (p.of.kind === "money" ? formatMoney(v, p.of.currency) : formatCount(v));
  const parts: string[] = [];
  if (clamped) parts.push(`you typed ${show(typed)}; ${show(applied)} will apply, the ${clamped === "max" ? "maximum" : "minimum"}`);
  if (unchanged) parts.push(`${show(applied)} is already the plan's value: nothing to save`);
  else if (applied === 0) parts.push("0 refuses every account on this plan here");
  else parts.push(`${show(base)} → ${show(applied)} for every account on this plan without an override`);
  if (needsConfirmation) parts.push(`that is ${CONFIRM_RAISE_FACTOR}× or more of what binds now: type the value again to confirm`);
  return { ok: true, typed, applied, clamped, unchanged, needsConfirmation, base, message: parts.join("; ") };
}
