import { canonicalCaller, hasLoneSurrogate } from "@/lib/canonical/caller";
import { hasControlCharacter } from "./strict-input";

// JSON.parse keeps the last of two equal keys: {"amount":100000,"amount":1} reserves 1, and a
// proxy or log that reads the first sees 100000. Bodies are refused when a key repeats or any
// string (key or value) carries a control character, after JSON.parse has checked the syntax.
// Before any of that, a body nested deeper than MAX_JSON_DEPTH is refused by a loop over its text:
// the checks below walk the parsed value recursively, and 8,000 levels of "[" overflowed the stack.

export type StrictJsonError = { code: "duplicate_field" | "invalid_characters" | "nesting_too_deep"; message: string };

/**
 * The deepest nesting of arrays and objects a body may have. Every body of the API is one flat
 * object (depth 1); the limit leaves room for any future body while staying far below the depth at
 * which a recursive walk of the value could exhaust the stack (several thousand levels).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether a JSON text opens more than `max` arrays or objects inside one another. A single pass
 * with a counter, no recursion and no parse, so any depth is safe to ask about; brackets inside
 * strings do not count.
 */
export function exceedsJsonDepth(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      // Skip the string: up to the next quote that no backslash escapes.
      i += 1;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
    } else if (ch === 0x5b || ch === 0x7b) {
      depth += 1;
      if (depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

/** The refusal of a body nested deeper than MAX_JSON_DEPTH, or null. */
export function checkJsonDepth(text: string): StrictJsonError | null {
  return exceedsJsonDepth(text)
    ? { code: "nesting_too_deep", message: `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }
    : null;
}

/** Scans a syntactically valid JSON text for an object with a key twice; returns that key. */
export function findDuplicateKey(text: string): string | null {
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (ch === "[") {
      stack.push(null);
      expectKey = false;
    } else if (ch === "}" || ch === "]") {
      stack.pop();
      expectKey = false;
    } else if (ch === ",") {
      expectKey = stack.at(-1) instanceof Set;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const keys = stack.at(-1);
        if (keys instanceof Set) {
          if (keys.has(key)) return key;
          keys.add(key);
        }
        expectKey = false;
      }
      i = j;
    }
  }
  return null;
}

// A lone UTF-16 surrogate ("\ud800" escaped in the JSON text; UTF-8 cannot carry one) is no
// character: a string holding one cannot be stored, and Postgres refuses the JSON a reserve batch
// sends with it, so the request was answered 503 unavailable ("retry shortly") and logged as a
// database failure, instead of a 400 naming the field.

type BadText = { field: string; what: "control" | "surrogate" };

function badText(text: string): BadText["what"] | null {
  if (hasControlCharacter(text)) return "control";
  return hasLoneSurrogate(text) ? "surrogate" : null;
}

function findBadText(value: unknown, path: string): BadText | null {
  if (typeof value === "string") {
    const what = badText(value);
    return what ? { field: path || "body", what } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBadText(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const what = badText(k);
      if (what) return { field: `${path}${path ? "." : ""}${JSON.stringify(k)}`, what };
      const found = findBadText(v, path ? `${path}.${k}` : k);
      if (found) return found;
    }
  }
  return null;
}

/**
 * The body with each top-level field named in `edgeTrimmed` (or `list[].field`, that field of each
 * row of a top-level list) trimmed as the caller is everywhere
 * (canonicalCaller): its edge whitespace, \v, \f and U+0085 included, is no control character at
 * the boundary, since the library and SQL trim the same caller to the same account.
 */
function withTrimmedFields(value: unknown, edgeTrimmed: readonly string[]): unknown {
  if (edgeTrimmed.length === 0 || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const name of edgeTrimmed) {
    // "accounts[].account": that field of every object in the top-level list `accounts`.
    const [list, field] = name.split("[].");
    const v = copy[list ?? name];
    if (field !== undefined && Array.isArray(v)) {
      copy[list ?? name] = v.map((row: unknown) =>
        row !== null && typeof row === "object" && typeof (row as Record<string, unknown>)[field] === "string"
          ? { ...(row as Record<string, unknown>), [field]: canonicalCaller((row as Record<string, string>)[field] ?? "") }
          : row,
      );
    } else if (typeof v === "string") copy[name] = canonicalCaller(v);
  }
  return copy;
}

/** The boundary's verdict on an already parsed body and its text. */
export function checkStrictJson(text: string, value: unknown, edgeTrimmed: readonly string[] = []): StrictJsonError | null {
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) return { code: "duplicate_field", message: `the field ${JSON.stringify(duplicate).slice(0, 60)} appears more than once` };
  const bad = findBadText(withTrimmedFields(value, edgeTrimmed), "");
  if (bad !== null) {
    const field = bad.field.slice(0, 60);
    const message =
      bad.what === "control"
        ? `${field} must not contain control characters`
        : `${field} must not contain a lone surrogate (an unpaired \\ud800-\\udfff escape is no character)`;
    return { code: "invalid_characters", message };
  }
  return null;
}
