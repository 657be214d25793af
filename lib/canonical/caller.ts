import { z } from "zod";

// One billing account is one string everywhere: the override, the counter, the reservation and
// the refusal must name the same account, so every boundary (HTTP, library, dashboard, SQL)
// trims the same whitespace and refuses the same control characters. SQL twin:
// db/functions/canonical_caller.sql and has_control_chars.sql.

// JavaScript's \s (Unicode White_Space plus U+FEFF) and U+0085, which \s leaves out.
const EDGE_SPACE = /^[\s\u0085]+|[\s\u0085]+$/g;
// C0 and C1 controls. NUL cannot reach Postgres at all (text and jsonb refuse it).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** The caller trimmed of Unicode whitespace at both ends. */
export function canonicalCaller(raw: string): string {
  return raw.replace(EDGE_SPACE, "");
}

export function hasControlChars(text: string): boolean {
  return text.search(CONTROL) >= 0;
}

// A lone UTF-16 surrogate is no character: Postgres cannot store it and refuses the whole batch's
// JSON, so a request holding one would be answered unavailable instead of refused for its input.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** The text with each control character (and lone surrogate) replaced by U+FFFD, so a refusal naming it can be stored. */
export function replaceControlChars(text: string): string {
  return text.replace(CONTROL, "\uFFFD").replace(LONE_SURROGATES, "\uFFFD");
}

/** A billing account, as enforcement keys per-caller ceilings: never an API token. */
export const CallerKey = z
  .string()
  .transform(canonicalCaller)
  .pipe(
    z
      .string()
      .min(1, "the billing account is required")
      .max(200, "the billing account must be 200 characters or fewer")
      .refine((v) => !hasControlChars(v), "the billing account must not contain control characters")
      // The database cannot store one: a bulk of 10,000 would fail whole with a driver error.
      .refine((v) => !hasLoneSurrogate(v), "the billing account must not contain a lone surrogate (an unpaired \\ud800-\\udfff is no character)"),
  );
