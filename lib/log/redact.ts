// Server logs leave the database's access control behind (log shippers, tickets, chat), so they
// carry no e-mail address, phone number or API-key material: callers and destinations are masked
// the way the CSV export masks them, key tokens and 64-hex hashes are cut to their public part, and
// an error is logged by its name, code and message, never its query parameters.
import { maskEmail, maskPhone } from "@/lib/refusals/mask";

const EMAIL = /[^\s@"'(),;:<>[\]=]+@[^\s@"'(),;:<>[\]=]+\.[A-Za-z]{2,}/g;
// Seven or more digits with the separators people write: phone numbers, not ids or timestamps.
const PHONE = /\+?\d[\d ().-]{5,18}\d/g;
const TOKEN = /\bck_([a-z0-9]{8})_[A-Za-z0-9_-]{10,}/g;
const HEX_SECRET = /\b[0-9a-f]{64}\b/g;

function looksLikePhone(match: string): boolean {
  const digits = match.replace(/\D/g, "");
  // ISO timestamps and dates are digit runs too; a phone number has 7-15 digits and no ":" context.
  return digits.length >= 7 && digits.length <= 15 && !/^\d{4}-\d{2}-\d{2}/.test(match);
}

/** A log line's text with e-mail addresses, phone numbers and key material masked. */
export function redact(text: string): string {
  return text
    .replace(TOKEN, (_, prefix: string) => `ck_${prefix}_***`)
    .replace(HEX_SECRET, "***")
    .replace(EMAIL, (m) => maskEmail(m))
    .replace(PHONE, (m) => (looksLikePhone(m) ? maskPhone(m) : m));
}

/** An error as one line: name, SQLSTATE and message of it and its causes, redacted. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof Error) {
      const code = "code" in e && typeof e.code === "string" ? ` [${e.code}]` : "";
      // postgres.js puts the failing row's values in `detail`; it is kept, redacted, for the keys.
      const detail = "detail" in e && typeof e.detail === "string" ? ` (${e.detail})` : "";
      // drizzle's "Failed query: <sql>\nparams: <values>" names every caller and destination.
      const message = e.message.replace(/\bparams: [\s\S]*$/, "params: (not logged)");
      parts.push(`${e.name}${code}: ${message}${detail}`);
      e = e.cause;
    } else {
      parts.push(String(e));
      e = undefined;
    }
  }
  return redact(parts.join(" <- caused by "));
}

export type LogSink = (line: string) => void;

// The one place server errors reach stderr.
let sink: LogSink = (line) => console.error(line);

/** Tests capture the log through this; the server writes to stderr. */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

/** Logs a failure with its context, redacted. Every server-side error log goes through here. */
export function logError(context: string, error?: unknown): void {
  sink(error === undefined ? redact(context) : `${redact(context)}: ${describeError(error)}`);
}

/** A warning line, redacted. */
export function logWarning(line: string): void {
  sink(redact(line));
}
