// Money typed by a person, and what saving it would do: pure functions shared by the server (which
// decides) and the budget forms (which preview). No database, no React: the browser imports this.

import { clampToBounds, CONFIRM_RAISE_FACTOR, type Clamp } from "@/lib/limits/parse";
import { ordinal } from "@/lib/limits/guarantee";
import { formatMoney } from "@/lib/format";

const MICROS_PER_UNIT = 1_000_000;
/** Dollars (or euros...) with at most six decimals, a micro: "200", "200.00", "1.5", "0.000001". */
const MONEY_TEXT = /^(\d+)(?:\.(\d{1,6}))?$/;

export type ParsedMoney = { ok: true; micros: number } | { ok: false; error: string };

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

export type BudgetAdjustmentKind = "kill" | "restore" | "raise" | "lower" | "unchanged";

export type BudgetAdjustmentPreview =
  | { ok: false; error: string }
  | { ok: true; typed: number; applied: number; clamped: Clamp; kind: BudgetAdjustmentKind; needsConfirmation: boolean; message: string };

export type BudgetPreviewParams = { raw: string; current: number; valueBeforeKill: number | null; min: number; max: number; currency: string };

/**
 * What saving `raw` as a budget's value would do, in words, before anything is saved: the same
 * rules as a ceiling's value (clamped into bounds, 0 kills, a raise to 5x or more is retyped),
 * in money.
 */
export function previewBudgetAdjustment(p: BudgetPreviewParams): BudgetAdjustmentPreview {
  const parsed = parseMoneyInput(p.raw, "value");
  if (!parsed.ok) return parsed;
  const typed = parsed.micros;
  const { applied, clamped } = clampToBounds(typed, { min: p.min, max: p.max });
  const killed = p.current === 0;
  let kind: BudgetAdjustmentKind;
  if (applied === p.current) kind = "unchanged";
  else if (applied === 0) kind = "kill";
  else if (killed) kind = "restore";
  else kind = applied > p.current ? "raise" : "lower";
  // A restore is compared with the value from before the kill, so un-killing is not itself a raise.
  const base = killed ? (p.valueBeforeKill ?? 0) : p.current;
  const needsConfirmation = (kind === "raise" || kind === "restore") && (base === 0 || applied >= base * CONFIRM_RAISE_FACTOR);
  const money = (m: number) => formatMoney(m, p.currency);
  const clampNote = clamped === null ? null : `you typed ${money(typed)}; ${money(applied)} will apply, the ${clamped === "max" ? "maximum" : "minimum"}`;
  const what: Record<BudgetAdjustmentKind, string> = {
    unchanged: `${money(applied)} is already the value: nothing to save`,
    kill: "0 kills this budget: every call on its members is refused until it is restored",
    restore: `restores this budget to ${money(applied)}`,
    raise: `raises ${money(p.current)} to ${money(applied)}`,
    lower: `lowers ${money(p.current)} to ${money(applied)}`,
  };
  const parts = [clampNote, what[kind]];
  if (needsConfirmation) parts.push(`that is ${CONFIRM_RAISE_FACTOR}× or more: type the value again to confirm`);
  return { ok: true, typed, applied, clamped, kind, needsConfirmation, message: parts.filter((s): s is string => s !== null).join("; ") };
}

/** "llm.a", "llm.a and llm.b", "llm.a, llm.b and llm.c". */
function listOf(keys: readonly string[]): string {
  if (keys.length <= 1) return keys.join("");
  return `${keys.slice(0, -1).join(", ")} and ${keys[keys.length - 1]}`;
}

export type BudgetShape = {
  scope: "global" | "account";
  window: "utc_day" | "billing_month";
  billingDay: number;
  value: number;
  currency: string;
  members: readonly string[];
};

/**
 * A budget's worst case in money, as the sentence the UI and `plan` print: "at most $200.00 a day
 * across llm.gpt-4o, llm.claude-sonnet and llm.embed"; per account "at most $2.00 a day for each
 * account across ...". A killed budget (0) says so.
 */
export function budgetSentence(b: BudgetShape): string {
  const per = b.window === "utc_day" ? "a day" : `a billing month (from the ${ordinal(b.billingDay)})`;
  const who = b.scope === "account" ? " for each account" : "";
  if (b.value === 0) return `nothing${who} across ${listOf(b.members)}: killed, every call on them is refused`;
  return `at most ${formatMoney(b.value, b.currency)} ${per}${who} across ${listOf(b.members)}`;
}
