import type { BadLine } from "./errors";

// What the two CSV readers share (file.ts: Ceilings' own usage file; focus.ts: a FOCUS export): RFC
// 4180 records with the line each starts on, a value quoted back safely, and the bad lines of a file
// refused whole, each named.

/** Bad lines listed at most: past this, one more entry says how many more there were. */
export const MAX_BAD_LINES = 500;

// C0 controls (but tab inside a quoted CSV field is still refused: an item never holds one), DEL, C1.
// eslint-disable-next-line no-control-regex -- finding control characters is the point.
export const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
export const WHOLE = /^\d+$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point.
const CONTROLS = /[\u0000-\u001F\u007F-\u009F]/g;
/** A value quoted back in a reason: cut short, any control character written as its code point. */
export const show = (s: string) =>
  (s.length > 40 ? `${s.slice(0, 40)}…` : s).replace(CONTROLS, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
export const codePoint = (s: string) => {
  const c = CONTROL.exec(s)?.[0] ?? "";
  return `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
};

/** Collects bad lines, the first MAX_BAD_LINES named and the rest counted. */
export class Problems {
  readonly list: BadLine[] = [];
  private extra = 0;
  add(line: number, reason: string) {
    if (this.list.length < MAX_BAD_LINES) this.list.push({ line, reason });
    else this.extra += 1;
  }
  get any() {
    return this.list.length > 0;
  }
  done(): BadLine[] {
    return this.extra > 0 ? [...this.list, { line: 0, reason: `and ${this.extra} more bad lines` }] : this.list;
  }
}

/** CSV records with the line each starts on; RFC 4180 quotes ("" inside quotes is one "). */
export function csvRecords(text: string): { line: number; cells: string[]; error?: string }[] {
  const out: { line: number; cells: string[]; error?: string }[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = "";
    let error: string | undefined;
    let quoted = false;
    let fresh = true;
    for (;;) {
      const c = text[i];
      if (quoted) {
        if (c === undefined) {
          error = "a quoted field is not closed";
          break;
        }
        if (c === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          quoted = false;
          i++;
          continue;
        }
        if (c === "\n") line++;
        cell += c;
        i++;
        continue;
      }
      if (c === undefined || c === "\n" || (c === "\r" && text[i + 1] === "\n")) {
        cells.push(cell);
        i += c === undefined ? 0 : c === "\r" ? 2 : 1;
        if (c !== undefined) line++;
        break;
      }
      if (c === ",") {
        cells.push(cell);
        cell = "";
        fresh = true;
        i++;
        continue;
      }
      if (c === '"' && fresh && cell.trim() === "") {
        quoted = true;
        cell = "";
        fresh = false;
        i++;
        continue;
      }
      if (c === '"') error ??= "a quote inside an unquoted field (quote the whole field and double the quote)";
      fresh = false;
      cell += c;
      i++;
    }
    // Blank lines (a trailing newline, a spacer) are not rows.
    if (!(cells.length === 1 && (cells[0] ?? "").trim() === "" && !error)) out.push({ line: start, cells, ...(error ? { error } : {}) });
  }
  return out;
}
