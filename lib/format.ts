// Numbers, money and times as a person reads them, in one place so the dashboard, the CLI and error
// messages agree. The database and lib/ keep integers (money in millionths of the currency) and
// Dates; only here do they become text. Times are UTC because every window is. No imports: client
// components use this file too.

const MICROS_PER_UNIT = 1_000_000;

const countFormatter = new Intl.NumberFormat("en-US");
const unitsFormatter = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const compactFormatter = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** 3000 → "3,000". */
export function formatCount(n: number): string {
  return countFormatter.format(n);
}

/** A quantity in whole units, "30,000,000 tokens"; averages and projections round to a unit. */
export function formatUnits(n: number, unit?: string): string {
  const text = unitsFormatter.format(n);
  return unit ? `${text} ${unit}` : text;
}

/** Short form for axis ticks: 1.2K, 3.4M. */
export function formatCompact(n: number): string {
  return compactFormatter.format(n);
}

export function formatPercent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}

// A formatter is costly to build and a table or a chart formats hundreds of amounts: one per
// currency and style, made on first use.
const moneyFormatters = new Map<string, Intl.NumberFormat>();
const MONEY_STYLES = {
  plain: { minimumFractionDigits: 2, maximumFractionDigits: 2 },
  small: { minimumFractionDigits: 2, maximumFractionDigits: 6 },
  compact: { notation: "compact", maximumFractionDigits: 1 },
} as const satisfies Record<string, Intl.NumberFormatOptions>;

function moneyFormatter(currency: string, style: keyof typeof MONEY_STYLES): Intl.NumberFormat {
  const key = `${currency}|${style}`;
  let formatter = moneyFormatters.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat("en-US", { style: "currency", currency, ...MONEY_STYLES[style] });
    moneyFormatters.set(key, formatter);
  }
  return formatter;
}

/**
 * Money from integer micros in the sentences lib/ and the command line write (errors, previews,
 * confirmations to type back). Amounts under one cent keep up to six decimals (one micro) so a call
 * that costs $0.000042 does not read as $0.00. The dashboard shows amounts with formatMoneyParts.
 */
export function formatMoney(micros: number, currency = "USD"): string {
  const small = micros !== 0 && Math.abs(micros) < 10_000;
  return moneyFormatter(currency, small ? "small" : "plain").format(micros / MICROS_PER_UNIT);
}

// Money as the dashboard shows it: every amount at its currency's own minor digits (cents for USD,
// none for JPY), so a row never mixes precisions, and the exact micros beside it for a tooltip, a
// `<data value>` and the exact line of a budget's page. Integer arithmetic on the micros, so the
// exact keeps every digit however large the amount (a float division would round past 2^53).

const MICRO_DIGITS = 6;
const minorDigitsByCurrency = new Map<string, number>();
const fixedFormatters = new Map<string, Intl.NumberFormat>();

/** Digits after the decimal point the currency itself uses: USD 2, JPY 0, BHD 3 (never more than a micro). */
function minorDigits(currency: string): number {
  let digits = minorDigitsByCurrency.get(currency);
  if (digits === undefined) {
    const standard = new Intl.NumberFormat("en-US", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digits = Math.min(standard, MICRO_DIGITS);
    minorDigitsByCurrency.set(currency, digits);
  }
  return digits;
}

function fixedFormatter(currency: string, digits: number): Intl.NumberFormat {
  const key = `${currency}|${digits}`;
  let formatter = fixedFormatters.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat("en-US", { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits });
    fixedFormatters.set(key, formatter);
  }
  return formatter;
}

/**
 * A non-negative amount of `scaled` (an integer of 10^-digits of the currency), written by Intl for
 * the symbol and grouping; the fraction digits are spliced in as text, since Intl takes the whole
 * part as a bigint exactly but would take the fraction only as a float.
 */
function writeScaled(scaled: bigint, digits: number, currency: string): string {
  const unit = 10n ** BigInt(digits);
  const fraction = (scaled % unit).toString().padStart(digits, "0");
  return fixedFormatter(currency, digits)
    .formatToParts(scaled / unit)
    .map((part) => (part.type === "fraction" ? fraction : part.value))
    .join("");
}

/** Whole micros as a bigint; a fraction of a micro (an average, a projection) rounds half away from zero. */
function wholeMicros(micros: number | bigint): bigint {
  return typeof micros === "bigint" ? micros : BigInt(Math.sign(micros) * Math.round(Math.abs(micros)));
}

export type MoneyParts = {
  /** At the currency's minor digits, rounded half away from zero: "$0.96"; "< $0.01" (or "> -$0.01") when an amount that is not 0 would read as 0. */
  text: string;
  /** Every micro: "$0.956109". */
  exact: string;
  /** The exact amount as a plain decimal, for `<data value>` and machines: "0.956109". */
  value: string;
  /** Whether `text` hides digits that `exact` shows. */
  rounded: boolean;
};

/**
 * Money from integer micros as the dashboard shows it (components/money.tsx). Rounding is half away
 * from zero (0.005 → $0.01, -0.005 → -$0.01), what a finance reader expects of a ledger total and
 * what Intl does by default; an amount that rounds to 0 but is not 0 says so ("< $0.01") rather
 * than claiming nothing was spent.
 */
export function formatMoneyParts(micros: number | bigint, currency = "USD"): MoneyParts {
  const whole = wholeMicros(micros);
  const negative = whole < 0n;
  const size = negative ? -whole : whole;
  const sign = negative ? "-" : "";
  const digits = minorDigits(currency);
  const step = 10n ** BigInt(MICRO_DIGITS - digits);
  // Half away from zero on the magnitude; the sign is put back after.
  const minor = size / step + (2n * (size % step) >= step ? 1n : 0n);
  const exact = `${sign}${writeScaled(size, MICRO_DIGITS, currency)}`;
  const value = `${sign}${size / 1_000_000n}.${(size % 1_000_000n).toString().padStart(MICRO_DIGITS, "0")}`;
  const rounded = minor * step !== size;
  if (minor === 0n && size > 0n) {
    const least = writeScaled(1n, digits, currency);
    return { text: negative ? `> -${least}` : `< ${least}`, exact, value, rounded };
  }
  return { text: `${sign}${writeScaled(minor, digits, currency)}`, exact, value, rounded };
}

/**
 * Money in a sentence that has no tooltip (an action's message): the rounded text, and the exact
 * after it when rounding hid digits, "$1.96 (exactly $1.956109)", so what was saved can be checked.
 */
export function formatMoneyText(micros: number | bigint, currency = "USD"): string {
  const parts = formatMoneyParts(micros, currency);
  return parts.rounded ? `${parts.text} (exactly ${parts.exact})` : parts.text;
}

/** Short money for axis ticks: $1.2K. */
export function formatMoneyCompact(micros: number, currency = "USD"): string {
  const amount = micros / MICROS_PER_UNIT;
  if (Math.abs(amount) < 1000) return formatMoney(micros, currency);
  return moneyFormatter(currency, "compact").format(amount);
}

/** Spend shown in units of the endpoint or in its currency (micros). */
export type SpendMode = "units" | "money";

export function formatAmount(value: number, mode: SpendMode, unit: string, currency: string): string {
  return mode === "units" ? formatUnits(value, unit) : formatMoney(value, currency);
}

/** "2025-03-05 14:05 UTC". */
export function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const dateTimeFormatter = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
const dateTimeSecondsFormatter = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });

/** "5 Mar 2025, 14:05", in UTC; with seconds where events come seconds apart (alerts, heartbeats). */
export function formatDateTime(date: Date, options: { seconds?: boolean } = {}): string {
  return (options.seconds ? dateTimeSecondsFormatter : dateTimeFormatter).format(date);
}

const dayFormatter = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
const instantFormatter = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZone: "UTC",
});

/** "Mar 5" from "2025-03-05", read as a UTC calendar day (never shifted by the viewer's zone). */
export function formatDay(day: string): string {
  return dayFormatter.format(new Date(`${day}T00:00:00Z`));
}

/** "Mar 5, 14:05 UTC" from epoch milliseconds. */
export function formatInstant(ms: number): string {
  return `${instantFormatter.format(new Date(ms))} UTC`;
}

/** "just now", "12 min ago", "3 h ago", "2 days ago". */
export function formatAgo(date: Date, now = new Date()): string {
  const seconds = Math.max(0, Math.round((now.getTime() - date.getTime()) / 1000));
  if (seconds < 60) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** An age in words a person reads at 3am: "45 s", "12 min", "3 h", "2 days". */
export function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
