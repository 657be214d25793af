// Pure functions shared by the server (which decides) and the adjust form (which previews).
// No database, no React: the browser imports this file too.

import { formatCount } from "@/lib/format";

export type ParsedLimit = { ok: true; value: number } | { ok: false; error: string };

/**
 * Reads a ceiling value typed by a person. Only plain whole numbers are accepted: `1e9`, `500abc`,
 * `12.5` and `-5` are errors rather than something Number() would quietly turn into a limit.
 */
export function parseLimitInput(raw: string, label = "limit"): ParsedLimit {
  const text = raw.trim();
  if (text === "") return { ok: false, error: `${label} is required: type a whole number such as 100` };
  if (/^-\d+$/.test(text)) {
    return { ok: false, error: `${label} must be a whole number of 0 or more, got '${text}'` };
  }
  if (!/^\d+$/.test(text)) return { ok: false, error: `${label} must be a whole number, got '${text}'` };
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    return {
      ok: false,
      error: `${label} must be at most ${formatCount(Number.MAX_SAFE_INTEGER)}, got '${text}'`,
    };
  }
  return { ok: true, value };
}

export type Bounds = { min: number; max: number };
export type Clamp = "min" | "max" | null;

/** Puts a value inside [min, max]. Zero is always allowed: it is the kill switch. */
export function clampToBounds(value: number, bounds: Bounds): { applied: number; clamped: Clamp } {
  if (value === 0) return { applied: 0, clamped: null };
  if (value < bounds.min) return { applied: bounds.min, clamped: "min" };
  if (value > bounds.max) return { applied: bounds.max, clamped: "max" };
  return { applied: value, clamped: null };
}

/** A raise to this many times the value in force (or remembered before a kill) asks to retype. */
export const CONFIRM_RAISE_FACTOR = 5;

export type AdjustmentKind = "kill" | "restore" | "raise" | "lower" | "unchanged";

export type AdjustmentPreview =
  | { ok: false; error: string }
  | {
      ok: true;
      typed: number;
      applied: number;
      clamped: Clamp;
      kind: AdjustmentKind;
      needsConfirmation: boolean;
      message: string;
    };

export type PreviewParams = {
  raw: string;
  current: number;
  valueBeforeKill: number | null;
  min: number;
  max: number;
};

/** What saving `raw` would do, in words, before anything is saved. */
export function previewAdjustment(p: PreviewParams): AdjustmentPreview {
  const parsed = parseLimitInput(p.raw);
  if (!parsed.ok) return parsed;
  const typed = parsed.value;
  const { applied, clamped } = clampToBounds(typed, { min: p.min, max: p.max });
  const killed = p.current === 0;

  let kind: AdjustmentKind;
  if (applied === p.current) kind = "unchanged";
  else if (applied === 0) kind = "kill";
  else if (killed) kind = "restore";
  else kind = applied > p.current ? "raise" : "lower";

  // A restore is compared with the value from before the kill, so un-killing is not itself a "raise".
  const base = killed ? (p.valueBeforeKill ?? 0) : p.current;
  const needsConfirmation = (kind === "raise" || kind === "restore") && (base === 0 || applied >= base * CONFIRM_RAISE_FACTOR);

  const clampNote =
    clamped === "max"
      ? `you typed ${formatCount(typed)}; ${formatCount(applied)} will apply, the maximum`
      : clamped === "min"
        ? `you typed ${formatCount(typed)}; ${formatCount(applied)} will apply, the minimum`
        : null;
  const what: Record<AdjustmentKind, string> = {
    unchanged: `${formatCount(applied)} is already the value: nothing to save`,
    kill: `0 kills this ceiling: every call is refused until it is restored`,
    restore: `restores this ceiling to ${formatCount(applied)}`,
    raise: `raises ${formatCount(p.current)} to ${formatCount(applied)}`,
    lower: `lowers ${formatCount(p.current)} to ${formatCount(applied)}`,
  };
  const parts = [clampNote, what[kind]];
  if (needsConfirmation) parts.push(`that is ${CONFIRM_RAISE_FACTOR}× or more: type the value again to confirm`);
  const message = parts.filter((s): s is string => s !== null).join("; ");
  return { ok: true, typed, applied, clamped, kind, needsConfirmation, message };
}
