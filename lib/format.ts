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
 * Money from integer micros. Amounts under one cent keep up to six decimals (one micro) so a call that
 * costs $0.000042 does not read as $0.00.
 */
export function formatMoney(micros: number, currency = "USD"): string {
  const small = micros !== 0 && Math.abs(micros) < 10_000;
  return moneyFormatter(currency, small ? "small" : "plain").format(micros / MICROS_PER_UNIT);
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
const instantFormatter = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });

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
