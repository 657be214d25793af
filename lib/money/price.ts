import { MAX_PRICE_PICO, PICOS_PER_MICRO, type EndpointPart } from "@/lib/vocabulary";

// Prices and money, exactly. A price is what one unit costs, written by people as a decimal in the
// currency ("0.0000025" is $2.50 per million tokens) and kept as an integer of picos (10^-12 of the
// currency). Money is whole micros, rounded up once per reservation. Everything here is integer or
// string arithmetic: a float would turn 0.0000025 into 0.0000024999... No imports but the
// vocabulary: the dashboard's client components use this file too.

/** Decimal places a price may have: one pico (10^-12 of the currency) is the resolution. */
export const PRICE_DECIMALS = 12;
const PICOS_PER_CURRENCY = 10n ** BigInt(PRICE_DECIMALS);
const PICOS_PER_MICRO_N = BigInt(PICOS_PER_MICRO);
/** Below this price a unit (one hundredth of a cent) a price reads better per million units. */
const PER_MILLION_BELOW_PICO = 100_000_000;

export type ParsedPrice = { ok: true; pricePico: number } | { ok: false; error: string };

const show = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * Reads a price typed by a person or written in a catalog file: a plain decimal of the currency per
 * unit, 0 to 1000, at most 12 decimal places. `1e9`, `0.5abc`, `-1`, `.5` and `$1` are errors that
 * say what was read, never something Number() would quietly turn into a price.
 */
export function parsePrice(raw: string, label = "price"): ParsedPrice {
  const text = raw.trim();
  if (text === "") return { ok: false, error: `${label} is required: type the price of one unit, such as 0.0079 (or 0 if it is free)` };
  if (/^-\d+(\.\d+)?$/.test(text)) return { ok: false, error: `${label} must be 0 or more, got '${show(text)}'` };
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, error: `${label} must be a plain decimal of the currency per unit, such as 0.0000025, got '${show(text)}'` };
  const whole = match[1] ?? "0";
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > PRICE_DECIMALS) {
    return {
      ok: false,
      error: `${label} must have at most ${PRICE_DECIMALS} decimal places (the resolution is one millionth of a micro), got '${show(text)}'`,
    };
  }
  const pico = BigInt(whole) * PICOS_PER_CURRENCY + BigInt(fraction.padEnd(PRICE_DECIMALS, "0") || "0");
  if (pico > BigInt(MAX_PRICE_PICO)) return { ok: false, error: `${label} must be at most 1000 a unit, got '${show(text)}'` };
  return { ok: true, pricePico: Number(pico) };
}

/** Picos as a plain decimal string with `scale` decimals at most, no trailing zeros, at least `min`. */
function decimal(value: bigint, scale: number, min = 0): string {
  const base = 10n ** BigInt(scale);
  const whole = value / base;
  const fraction = (value % base).toString().padStart(scale, "0").replace(/0+$/, "").padEnd(min, "0");
  return fraction === "" ? whole.toString() : `${whole.toString()}.${fraction}`;
}

/** A price in picos as the canonical decimal a catalog file holds: 2,500,000 → "0.0000025". */
export function formatPriceDecimal(pricePico: number): string {
  return decimal(BigInt(pricePico), PRICE_DECIMALS);
}

const symbols = new Map<string, string>();

/** What goes before the amount for a currency in en-US: "$", "€", "CHF ". */
function currencyPrefix(currency: string): string {
  let prefix = symbols.get(currency);
  if (prefix === undefined) {
    const parts = new Intl.NumberFormat("en-US", { style: "currency", currency }).formatToParts(1);
    const at = parts.findIndex((p) => p.type === "integer");
    prefix = parts
      .slice(0, at)
      .map((p) => p.value)
      .join("");
    symbols.set(currency, prefix);
  }
  return prefix;
}

/** The price of one unit, exactly: "$0.0000025", "$0.0079", "$1.00". */
export function formatPrice(pricePico: number, currency = "USD"): string {
  return `${currencyPrefix(currency)}${decimal(BigInt(pricePico), PRICE_DECIMALS, 2)}`;
}

/** The price of a million units, exactly: "$2.50 per 1M". A million units cost pricePico micros. */
export function formatPricePerMillion(pricePico: number, currency = "USD"): string {
  return `${currencyPrefix(currency)}${decimal(BigInt(pricePico), 6, 2)} per 1M`;
}

/** A price as people read it: "$2.50 per 1M tokens" for a token's fraction of a cent, else "$0.0079 per message". */
export function describePrice(pricePico: number, currency: string, unit: string, singular = unit): string {
  if (pricePico > 0 && pricePico < PER_MILLION_BELOW_PICO) return `${formatPricePerMillion(pricePico, currency)} ${unit}`;
  return `${formatPrice(pricePico, currency)} per ${singular}`;
}

/** An endpoint's prices in words: "$0.0079 per message", or "input $2.50 per 1M tokens, output $10.00 per 1M tokens". */
export function describeParts(parts: readonly EndpointPart[], currency: string, unit: string, singular = unit): string {
  const [only] = parts;
  if (parts.length === 1 && only) return describePrice(only.pricePico, currency, unit, singular);
  return parts.map((p) => `${p.name} ${describePrice(p.pricePico, currency, unit, singular)}`).join(", ");
}

/** The dearest part's price: what one unit may cost at most, whichever part it turns out to be. */
export function dearestPrice(parts: readonly Pick<EndpointPart, "pricePico">[]): number {
  return parts.reduce((max, p) => Math.max(max, p.pricePico), 0);
}

const ceilDiv = (n: bigint, d: bigint) => (n + d - 1n) / d;

function whole(n: bigint | number, what: string): bigint {
  if (typeof n === "number" && !Number.isSafeInteger(n)) throw new RangeError(`${what} must be a whole number, got ${n}`);
  const v = BigInt(n);
  if (v < 0n) throw new RangeError(`${what} must be 0 or more, got ${v}`);
  return v;
}

/**
 * The money of a reservation in whole micros: the sum over its parts of units × price (in picos),
 * rounded UP once, so it never under-counts and never over-counts by a whole micro. Parts left out
 * count 0 units; a part the prices do not name is an error (the caller validates names first).
 */
export function moneyOf(parts: Readonly<Record<string, bigint | number>>, prices: Readonly<Record<string, bigint | number>> | readonly EndpointPart[]): bigint {
  const priceOf = new Map<string, bigint>(
    Array.isArray(prices)
      ? prices.map((p: EndpointPart) => [p.name, BigInt(p.pricePico)])
      : Object.entries(prices).map(([name, price]) => [name, BigInt(price)]),
  );
  let picos = 0n;
  for (const [name, units] of Object.entries(parts)) {
    const price = priceOf.get(name);
    if (price === undefined) throw new RangeError(`no part named '${name}' (the parts are ${[...priceOf.keys()].join(", ")})`);
    picos += whole(units, `units of part '${name}'`) * price;
  }
  return ceilDiv(picos, PICOS_PER_MICRO_N);
}

/** Units at one price in whole micros, rounded up: the money of a count of units of a single-priced endpoint. */
export function microsOfUnits(units: number, pricePico: number): number {
  return Number(ceilDiv(whole(units, "units") * whole(pricePico, "price"), PICOS_PER_MICRO_N));
}
