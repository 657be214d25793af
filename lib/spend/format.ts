// Formatting for spend at the edge: the database and lib/spend keep integers (units, and money in
// millionths of the currency); only what a person reads becomes a decimal string.

const MICROS_PER_UNIT = 1_000_000;

const countFormatter = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const compactFormatter = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export function formatUnits(n: number, unit?: string): string {
  const text = countFormatter.format(n);
  return unit ? `${text} ${unit}` : text;
}

/** Short form for axis ticks: 1.2K, 3.4M. */
export function formatCompact(n: number): string {
  return compactFormatter.format(n);
}

/**
 * Money from integer micros. Amounts under one cent keep up to six decimals (one micro) so a call that
 * costs $0.000042 does not read as $0.00.
 */
export function formatMoney(micros: number, currency = "USD"): string {
  const amount = micros / MICROS_PER_UNIT;
  const small = micros !== 0 && Math.abs(micros) < 10_000;
  return new Intl.NumberFormat("en-US", {
    style: "currency",
    currency,
    minimumFractionDigits: 2,
    maximumFractionDigits: small ? 6 : 2,
  }).format(amount);
}

/** Short money for axis ticks: $1.2K. */
export function formatMoneyCompact(micros: number, currency = "USD"): string {
  const amount = micros / MICROS_PER_UNIT;
  if (Math.abs(amount) < 1000) return formatMoney(micros, currency);
  return new Intl.NumberFormat("en-US", { style: "currency", currency, notation: "compact", maximumFractionDigits: 1 }).format(amount);
}

/** "Mar 5" from "2025-03-05", read as a UTC calendar day (never shifted by the viewer's zone). */
export function formatDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" }).format(date);
}

/** "Mar 5, 14:05 UTC" from epoch milliseconds. */
export function formatInstant(ms: number): string {
  return `${new Intl.DateTimeFormat("en-US", {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone: "UTC",
  }).format(new Date(ms))} UTC`;
}
