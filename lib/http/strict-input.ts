import { z } from "zod";

// One strict boundary for every text that comes in: API bodies, form fields, query strings, route
// params and CSV filters all pass these checks before any parsing that could reach the database.
// Postgres refuses NUL in text outright, and other control characters forge log lines and CSV
// cells; a clear 400 or a form error naming the field is the answer, never a database error.

// C0 controls except tab, line feed and carriage return (textareas send those), DEL and C1.
// eslint-disable-next-line no-control-regex -- matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

/** Longest text any single field or parameter may carry; each schema sets its own, lower, cap. */
export const MAX_FIELD_LENGTH = 10_000;
export const MAX_FIELDS = 200;

export type InputRejection = { field: string; message: string; raw: string };

export function hasControlCharacter(value: string): boolean {
  return CONTROL.test(value);
}

/** A refused value as it can be stored and shown: control characters escaped, length bounded. */
export function escapeRaw(value: string, max = 200): string {
  const escaped = JSON.stringify(value.length > max ? value.slice(0, max) : value).slice(1, -1);
  return value.length > max ? `${escaped}… (${value.length} characters)` : escaped;
}

/** The first field that breaks the boundary rules, or null. */
export function checkTextFields(fields: Iterable<[string, string]>, maxLength = MAX_FIELD_LENGTH): InputRejection | null {
  let count = 0;
  for (const [name, value] of fields) {
    count += 1;
    const field = hasControlCharacter(name) ? escapeRaw(name, 40) : name.slice(0, 60);
    if (count > MAX_FIELDS) return { field, message: `at most ${MAX_FIELDS} fields are accepted`, raw: "" };
    if (hasControlCharacter(name)) return { field, message: `field name ${field} contains a control character`, raw: name };
    if (hasControlCharacter(value)) return { field, message: `${field} must not contain control characters`, raw: value };
    if (value.length > maxLength) return { field, message: `${field} must be at most ${maxLength} characters, got ${value.length}`, raw: value };
  }
  return null;
}

/**
 * A form's fields as strings, past the boundary rules: files refused (no form here uploads
 * anything), then checkTextFields. The first refusal, naming its field, or every entry in order.
 */
export function strictFormEntries(
  formData: FormData,
  maxLength = MAX_FIELD_LENGTH,
): { ok: true; entries: [string, string][] } | { ok: false; rejection: InputRejection } {
  const entries: [string, string][] = [];
  for (const [name, value] of formData.entries()) {
    if (typeof value !== "string")
      return { ok: false, rejection: { field: name.slice(0, 60), message: `${name.slice(0, 60)} must be text, not a file`, raw: "" } };
    entries.push([name, value]);
  }
  const rejection = checkTextFields(entries, maxLength);
  return rejection ? { ok: false, rejection } : { ok: true, entries };
}

/** A record id: plain decimal digits only, so "0x0A", "1e1", "10.0" and " 10" name no row. */
export function decimalId(field: string) {
  return z
    .string({ error: `${field} is required` })
    .regex(/^[1-9]\d{0,14}$/, `${field} must be a whole number written in digits`)
    .transform(Number);
}

/**
 * Decodes a percent-encoded path segment or query part, or null when the encoding is broken
 * ("%E0%A4%A") or the result holds a control character ("%00").
 */
export function decodeStrict(raw: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  return hasControlCharacter(decoded) ? null : decoded;
}

const PLAIN_PATH = /^[!-$&-~]*$/;

/** The problem with a URL's path or query, naming the part, or null when both are clean. */
export function checkUrl(pathname: string, search: string): InputRejection | null {
  // A path of printable ASCII without a '%' (every path the API's clients send) decodes to
  // itself and holds no control character: nothing to decode, segment by segment.
  if (!PLAIN_PATH.test(pathname)) {
    for (const segment of pathname.split("/")) {
      if (segment === "") continue;
      if (decodeStrict(segment) === null)
        return { field: "path", message: `the path segment '${segment.slice(0, 40)}' has invalid percent-encoding or a control character`, raw: segment };
    }
  }
  const query = search.startsWith("?") ? search.slice(1) : search;
  if (query === "") return null;
  const parts = query.split("&");
  if (parts.length > MAX_FIELDS) return { field: "query", message: `at most ${MAX_FIELDS} query parameters are accepted`, raw: "" };
  for (const part of parts) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    const name = decodeStrict(rawName.replaceAll("+", " "));
    const shown = name ?? escapeRaw(rawName, 40);
    if (name === null) return { field: shown, message: `query parameter '${shown}' has invalid percent-encoding or a control character`, raw: rawName };
    const value = decodeStrict(rawValue.replaceAll("+", " "));
    if (value === null) return { field: name, message: `query parameter ${name} has invalid percent-encoding or a control character`, raw: rawValue };
    if (value.length > MAX_FIELD_LENGTH) return { field: name, message: `query parameter ${name} is too long`, raw: value };
  }
  return null;
}

/** Whether "YYYY-MM-DDTHH:MM:SS(.ffffff)Z" names a real instant: month 13 or 99:99 does not. */
export function isRealUtcInstant(text: string): boolean {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{1,6})?Z$/.exec(text);
  if (!match?.[1]) return false;
  const date = new Date(`${match[1]}Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === match[1];
}
