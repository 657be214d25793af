// One billing account is one string everywhere: the override, the counter, the reservation and
// the refusal must name the same account, so every boundary (HTTP, library, dashboard, SQL)
// trims the same whitespace and refuses the same control characters. SQL twin:
// db/functions/canonical_caller.sql and has_control_chars.sql.

// JavaScript's \s (Unicode White_Space plus U+FEFF) and U+0085, which \s leaves out.
const EDGE_SPACE = /^[\s\u0085]+|[\s\u0085]+$/g;
// C0 and C1 controls. NUL cannot reach Postgres at all (text and jsonb refuse it).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The caller trimmed of Unicode whitespace at both ends. */
export function canonicalCaller(raw: string): string {
  return raw.replace(EDGE_SPACE, "");
}

export function hasControlChars(text: string): boolean {
  return CONTROL.test(text);
}
