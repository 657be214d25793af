// Provider money, exactly: a decimal string ("123.45" cents) or a JSON number (0.06 dollars) read
// into whole micros with integer arithmetic, rounded half-up (half away from zero for credits) to
// the nearest micro. A JSON number is read by its shortest round-trip text, which is the decimal the
// provider wrote whenever it had at most 15 significant digits, so 0.1 stays 0.1, never 0.1000000000000000055.

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

export type MicrosResult = { ok: true; micros: number } | { ok: false; error: string };

/**
 * Micros of a decimal amount. `unitExponent` says what one unit of the text is worth in the
 * currency as a power of ten: 0 for dollars, −2 for cents (Anthropic's cost report).
 * `exponents` admits 1e-7 forms (a JSON number's text); `negative` admits credits.
 */
export function decimalToMicros(value: string | number, opts: { unitExponent?: number; exponents?: boolean; negative?: boolean } = {}): MicrosResult {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value;
  const m = DECIMAL.exec(text);
  if (!m || (m[4] !== undefined && !(opts.exponents ?? typeof value === "number")))
    return { ok: false, error: `'${text.slice(0, 40)}' is not a plain decimal amount` };
  const negative = m[1] === "-";
  if (negative && !opts.negative) return { ok: false, error: `'${text.slice(0, 40)}' is negative` };
  const fraction = m[3] ?? "";
  const digits = BigInt(`${m[2] ?? "0"}${fraction}`);
  const shift = Number(m[4] ?? "0") - fraction.length + 6 + (opts.unitExponent ?? 0);
  let micros: bigint;
  if (shift >= 0) {
    if (shift > 30) return { ok: false, error: `'${text.slice(0, 40)}' is too large` };
    micros = digits * 10n ** BigInt(shift);
  } else {
    if (-shift > 60) {
      micros = 0n;
    } else {
      const base = 10n ** BigInt(-shift);
      micros = (digits + base / 2n) / base;
    }
  }
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, error: `'${text.slice(0, 40)}' is too large` };
  const n = Number(micros);
  return { ok: true, micros: negative && n !== 0 ? -n : n };
}
