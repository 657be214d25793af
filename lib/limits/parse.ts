// A limit's value typed by a person, and what saving it would do: a count (a ceiling) or money (a
// budget, in micros of its currency), read by one rule each and previewed by one. Pure functions
// shared by the server (which decides) and the forms (which preview). No database, no React: the
// browser imports this file too.

import { formatCount, formatMoney } from "@/lib/format";

const MICROS_PER_UNIT = 1_000_000;
/** Dollars (or euros...) with at most six decimals, a micro: "200", "200.00", "1.5", "0.000001". */
const MONEY_TEXT = /^(\d+)(?:\.(\d{1,6}))?$/;

export type ParsedMoney = { ok: true; micros: number } | { ok: false; error: string };

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
  /** A budget's value: money typed in this currency, held in micros. Absent: a ceiling's count. */
  currency?: string;
};

/**
 * What saving `raw` would do, in words, before anything is saved: clamped into the bounds, 0 kills,
 * a raise to CONFIRM_RAISE_FACTOR times or more (or any restore from 0) is typed twice. The same
 * rules for a ceiling and a budget; only the measure and the words differ.
 */
export function previewAdjustment(p: PreviewParams): AdjustmentPreview {
  const { currency } = p;
  const parsed = currency === undefined ? parseLimitInput(p.raw) : parseMoneyInput(p.raw, "value");
  if (!parsed.ok) return parsed;
  const typed = "micros" in parsed ? parsed.micros : parsed.value;
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

  const show = (n: number) => (currency === undefined ? formatCount(n) : formatMoney(n, currency));
  const noun = currency === undefined ? "ceiling" : "budget";
  const clampNote = clamped === null ? null : `you typed ${show(typed)}; ${show(applied)} will apply, the ${clamped === "max" ? "maximum" : "minimum"}`;
  const what: Record<AdjustmentKind, string> = {
    unchanged: `${show(applied)} is already the value: nothing to save`,
    kill:
      currency === undefined
        ? "0 kills this ceiling: every call is refused until it is restored"
        : "0 kills this budget: every call on its members is refused until it is restored",
    restore: `restores this ${noun} to ${show(applied)}`,
    raise: `raises ${show(p.current)} to ${show(applied)}`,
    lower: `lowers ${show(p.current)} to ${show(applied)}`,
  };
  const parts = [clampNote, what[kind]];
  if (needsConfirmation) parts.push(`that is ${CONFIRM_RAISE_FACTOR}× or more: type the value again to confirm`);
  const message = parts.filter((s): s is string => s !== null).join("; ");
  return { ok: true, typed, applied, clamped, kind, needsConfirmation, message };
}

/**
 * Reads an amount of money typed in whole currency units with up to six decimals, into integer
 * micros without a float in between. `1e9`, `500abc`, `-5`, `1,000` and the empty string are
 * errors: Number() would quietly turn some of them into a limit.
 */
export function parseMoneyInput(raw: string, label = "amount"): ParsedMoney {
  const text = raw.trim();
  if (text === "") return { ok: false, error: `${label} is required: type an amount such as 200 or 1.50` };
  if (/^-/.test(text)) return { ok: false, error: `${label} must be 0 or more, got '${text}'` };
  const match = MONEY_TEXT.exec(text);
  if (!match) {
    if (/^\d+\.\d{7,}$/.test(text)) return { ok: false, error: `${label} has more than six decimals (finer than a micro), got '${text}'` };
    return { ok: false, error: `${label} must be an amount such as 200 or 1.50, got '${text}'` };
  }
  const whole = match[1] ?? "0";
  const fraction = (match[2] ?? "").padEnd(6, "0");
  const micros = BigInt(whole) * BigInt(MICROS_PER_UNIT) + BigInt(fraction);
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, error: `${label} is too large, got '${text}'` };
  return { ok: true, micros: Number(micros) };
}

/** Micros as the text a person would type back: 200000000 → "200", 1500000 → "1.5". */
export function moneyInputText(micros: number): string {
  const whole = Math.floor(micros / MICROS_PER_UNIT);
  const fraction = String(micros % MICROS_PER_UNIT)
    .padStart(6, "0")
    .replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/**
 * A value typed again to confirm a large raise, in the limit's measure: money in `currency`, else
 * a count. Null when it does not read as one.
 */
export function parseConfirmation(raw: string, currency: string | undefined): number | null {
  if (currency === undefined) {
    const read = parseLimitInput(raw);
    return read.ok ? read.value : null;
  }
  const read = parseMoneyInput(raw, "confirmation");
  return read.ok ? read.micros : null;
}
