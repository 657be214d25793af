// A strict JSON reader for usage files: JSON.parse keeps the last of two equal keys without a word
// and reads 1e9 as a whole number, so a file could say two things at once or slip a float past the
// units check. This reader refuses duplicate keys and keeps every number as the text written.

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue };

/** A number exactly as written in the file ("1e9", "12.50"): the caller decides what it may be. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

export class JsonSyntaxError extends Error {
  override name = "JsonSyntaxError";
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Where a duplicate key was found: the key and the array indexes leading to its object. */
export type DuplicateKey = { key: string; indexes: number[] };

/**
 * Parses `text`, refusing anything JSON.parse would refuse. A duplicate key is reported through
 * `onDuplicate` (with the array indexes leading to it, so a file names the row) when given, and
 * refused as a syntax error otherwise; the first value is kept either way.
 */
export function parseStrictJson(text: string, onDuplicate?: (d: DuplicateKey) => void): JsonValue {
  let i = 0;
  const indexes: number[] = [];
  const fail = (what: string): never => {
    const before = text.slice(0, i);
    const line = before.split("\n").length;
    throw new JsonSyntaxError(`${what} at line ${line}, column ${i - before.lastIndexOf("\n")}`);
  };
  const space = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const string = (): string => {
    i++;
    let out = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) return fail("unterminated string");
      if (c === '"') {
        i++;
        return out;
      }
      if (c === "\\") {
        const e = text[i + 1] ?? "";
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail("bad \\u escape");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else {
          const mapped = ESCAPES[e];
          if (mapped === undefined) return fail(`bad escape \\${e}`);
          out += mapped;
          i += 2;
        }
        continue;
      }
      if (c < " ") return fail("raw control character in a string");
      out += c;
      i++;
    }
  };
  const value = (depth: number): JsonValue => {
    if (depth > 32) return fail("nested too deeply");
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: { [key: string]: JsonValue } = {};
      space();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        space();
        if (text[i] !== '"') return fail("expected a key");
        const keyAt = i;
        const key = string();
        const duplicate = Object.hasOwn(obj, key);
        if (duplicate && !onDuplicate) {
          i = keyAt;
          return fail(`duplicate key "${key.slice(0, 40)}"`);
        }
        if (duplicate) onDuplicate?.({ key, indexes: [...indexes] });
        space();
        if (text[i] !== ":") return fail("expected ':'");
        i++;
        const v = value(depth + 1);
        if (!duplicate) obj[key] = v;
        space();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        return fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr: JsonValue[] = [];
      space();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        indexes.push(arr.length);
        arr.push(value(depth + 1));
        indexes.pop();
        space();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        return fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      return new JsonNumber(m[0]);
    }
    return fail(c === undefined ? "unexpected end of file" : `unexpected '${c}'`);
  };
  const result = value(0);
  space();
  if (i < text.length) fail("unexpected text after the end");
  return result;
}
