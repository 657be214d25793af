import { isProviderDay } from "./days";
import { decimalToMicros } from "./decimal";
import type { BadLine } from "./errors";
import { CONTROL, codePoint, csvRecords, Problems, show, WHOLE } from "./csv";
import { isFocusHeader, parseFocus } from "./focus";
import { JsonNumber, JsonSyntaxError, parseStrictJson, type JsonValue } from "./strict-json";
import type { ReportedRow } from "./types";

// A usage file, for every provider without a usage API: one row per
// day and item (an endpoint key or the provider's own item name) with its units and, when the
// provider reports money, its cost. It is refused whole when any line is bad, every bad line named
// with its reason, so nothing is ever half-imported.
//   CSV:  date,item,units,cost      (cost optional: a column left out or a cell left empty)
//   JSON: [{"date": "...", "item": "...", "units": 12, "cost": "0.12"}, ...] or {"rows": [...]}
// or a FOCUS export of a cloud's bill, as it is (focus.ts).

export const MAX_FILE_BYTES = 5 * 1024 * 1024;
export const MAX_FILE_ROWS = 100_000;
export const MAX_ITEM_LENGTH = 200;
export type UsageFileFormat = "csv" | "json";
export type ParsedUsageFile = { ok: true; rows: ReportedRow[] } | { ok: false; errors: BadLine[] };

type Cells = { date: string; item: string; units: string; cost: string | null };

/** One row's fields checked: the row, or every reason it is refused. */
function readRow(c: Cells): { row: Omit<ReportedRow, "raw"> } | { reasons: string[] } {
  const reasons: string[] = [];
  // A control character is named by its code point, never echoed (a NUL would end a log line).
  const clean = (name: string, value: string) => {
    if (!CONTROL.test(value)) return true;
    reasons.push(`${name} contains a control character (${codePoint(value)})`);
    return false;
  };
  const date = c.date.trim();
  if (clean("date", c.date) && !isProviderDay(date)) reasons.push(`date must be a real day written YYYY-MM-DD, got '${show(date)}'`);
  const item = c.item.trim();
  if (clean("item", c.item)) {
    if (item === "") reasons.push("item is empty");
    else if (item.length > MAX_ITEM_LENGTH) reasons.push(`item is ${item.length} characters long; at most ${MAX_ITEM_LENGTH}`);
  }
  const units = c.units.trim();
  let unitCount = 0;
  if (clean("units", c.units)) {
    if (!WHOLE.test(units) || !Number.isSafeInteger(Number(units))) reasons.push(`units must be a whole number 0 or more, got '${show(units)}'`);
    else unitCount = Number(units);
  }
  let costMicros: number | null = null;
  const cost = c.cost?.trim() ?? "";
  if (cost !== "" && clean("cost", cost)) {
    const parsed = decimalToMicros(cost, { exponents: false, negative: false });
    if (!parsed.ok) reasons.push(`cost must be a plain decimal 0 or more such as 12.50, got '${show(cost)}'`);
    else costMicros = parsed.micros;
  }
  return reasons.length > 0 ? { reasons } : { row: { day: date, item, units: unitCount, costMicros } };
}

const COLUMNS = ["date", "item", "units", "cost"] as const;

function parseCsv(text: string, source: FileSourceContext): ParsedUsageFile {
  const problems = new Problems();
  const records = csvRecords(text);
  const [header, ...body] = records;
  // A FOCUS export is read as it is (focus.ts): its header names ChargePeriodStart and BilledCost.
  if (header && isFocusHeader(header.cells)) {
    // Its instants fall into days in the source's zone and its money must be the source's: never guessed.
    if (source.timeZone === undefined || source.currency === undefined)
      throw new Error("parseUsageFile: a FOCUS export is read for a source; pass its timeZone and currency");
    if (body.length > MAX_FILE_ROWS) return { ok: false, errors: [{ line: 0, reason: `the file has ${body.length} rows; at most ${MAX_FILE_ROWS}` }] };
    return parseFocus(records, { timeZone: source.timeZone, currency: source.currency });
  }
  if (!header) return { ok: false, errors: [{ line: 1, reason: "the file is empty: the first line must be the header date,item,units,cost" }] };
  const names = header.cells.map((c) => c.trim().toLowerCase());
  const at = new Map<string, number>();
  for (const [index, name] of names.entries()) {
    // A control character is named by its code point, never echoed (as in the rows).
    if (CONTROL.test(name))
      problems.add(header.line, `column ${index + 1} of the header contains a control character (${codePoint(name)}): the header must be date,item,units,cost`);
    else if (!(COLUMNS as readonly string[]).includes(name))
      problems.add(header.line, `unknown column '${show(name)}': the header must be date,item,units,cost (cost may be left out)`);
    else if (at.has(name)) problems.add(header.line, `column '${name}' appears twice`);
    else at.set(name, index);
  }
  for (const need of ["date", "item", "units"])
    if (!at.has(need)) problems.add(header.line, `the header has no '${need}' column: it must be date,item,units,cost`);
  if (problems.any) return { ok: false, errors: problems.done() };
  if (body.length > MAX_FILE_ROWS) return { ok: false, errors: [{ line: 0, reason: `the file has ${body.length} rows; at most ${MAX_FILE_ROWS}` }] };
  const cell = (cells: string[], name: string) => {
    const index = at.get(name);
    return index === undefined ? null : (cells[index] ?? "");
  };
  const rows: ReportedRow[] = [];
  const seen = new Map<string, number>();
  for (const r of body) {
    if (r.error) {
      problems.add(r.line, r.error);
      continue;
    }
    if (r.cells.length !== names.length) {
      problems.add(r.line, `expected ${names.length} fields (${names.join(",")}), got ${r.cells.length}`);
      continue;
    }
    const raw = Object.fromEntries(names.map((n, k) => [n, r.cells[k] ?? ""]));
    const checked = readRow({
      date: cell(r.cells, "date") ?? "",
      item: cell(r.cells, "item") ?? "",
      units: cell(r.cells, "units") ?? "",
      cost: cell(r.cells, "cost"),
    });
    if ("reasons" in checked) {
      problems.add(r.line, checked.reasons.join("; "));
      continue;
    }
    const key = `${checked.row.day}\u0000${checked.row.item}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.add(r.line, `duplicate of line ${first}: ${checked.row.day} ${show(checked.row.item)} appears twice`);
      continue;
    }
    seen.set(key, r.line);
    rows.push({ ...checked.row, raw: { line: r.line, ...raw } });
  }
  return problems.any ? { ok: false, errors: problems.done() } : { ok: true, rows };
}

/** A JSON cell as the text a CSV cell would hold: strings and numbers as written, anything else refused. */
function jsonCell(v: JsonValue | undefined, name: string, reasons: string[]): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v;
  if (v instanceof JsonNumber) return v.text;
  reasons.push(`${name} must be a string or a number, got ${Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : String(v)}`);
  return null;
}

function plain(v: JsonValue): unknown {
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function parseJson(text: string): ParsedUsageFile {
  const problems = new Problems();
  let doc: JsonValue;
  const duplicates: { key: string; indexes: number[] }[] = [];
  try {
    doc = parseStrictJson(text, (d) => duplicates.push(d));
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, errors: [{ line: 0, reason: `the file is not valid JSON: ${error.message}` }] };
    throw error;
  }
  // The rows' indexes are the first array index on a duplicate key's path, at the top or in "rows".
  let list: JsonValue[];
  if (Array.isArray(doc)) {
    list = doc;
  } else if (doc !== null && typeof doc === "object" && !(doc instanceof JsonNumber) && Array.isArray(doc.rows) && Object.keys(doc).length === 1) {
    list = doc.rows;
  } else {
    return { ok: false, errors: [{ line: 0, reason: 'a JSON usage file is an array of {"date","item","units","cost"} rows, or {"rows": [...]}' }] };
  }
  if (list.length > MAX_FILE_ROWS) return { ok: false, errors: [{ line: 0, reason: `the file has ${list.length} rows; at most ${MAX_FILE_ROWS}` }] };
  const dupByRow = new Map<number, string[]>();
  for (const d of duplicates) {
    const row = d.indexes[0];
    if (row === undefined) {
      problems.add(0, `duplicate key "${show(d.key)}" outside the rows`);
      continue;
    }
    dupByRow.set(row, [...(dupByRow.get(row) ?? []), d.key]);
  }
  const rows: ReportedRow[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of list.entries()) {
    const line = index + 1;
    const reasons: string[] = [];
    for (const key of dupByRow.get(index) ?? []) reasons.push(`duplicate key "${show(key)}"`);
    if (entry === null || typeof entry !== "object" || Array.isArray(entry) || entry instanceof JsonNumber) {
      problems.add(line, 'a row must be an object {"date","item","units","cost"}');
      continue;
    }
    for (const key of Object.keys(entry)) {
      if (CONTROL.test(key)) reasons.push(`a field name contains a control character (${codePoint(key)})`);
      else if (!(COLUMNS as readonly string[]).includes(key)) reasons.push(`unknown field '${show(key)}'`);
    }
    const date = jsonCell(entry.date, "date", reasons) ?? "";
    const item = jsonCell(entry.item, "item", reasons) ?? "";
    const units = jsonCell(entry.units, "units", reasons) ?? "";
    const cost = jsonCell(entry.cost, "cost", reasons);
    const checked = readRow({ date, item, units, cost });
    if ("reasons" in checked) reasons.push(...checked.reasons);
    if ("reasons" in checked || reasons.length > 0) {
      problems.add(line, reasons.join("; "));
      continue;
    }
    const key = `${checked.row.day}\u0000${checked.row.item}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.add(line, `duplicate of row ${first}: ${checked.row.day} ${show(checked.row.item)} appears twice`);
      continue;
    }
    seen.set(key, line);
    const raw = plain(entry);
    rows.push({ ...checked.row, raw: { line, ...(raw !== null && typeof raw === "object" ? raw : {}) } });
  }
  return problems.any ? { ok: false, errors: problems.done() } : { ok: true, rows };
}

/** The format a file is in when not said: JSON when it opens with [ or {, CSV otherwise. */
export function sniffFormat(text: string): UsageFileFormat {
  return /^\uFEFF?\s*[[{]/.test(text) ? "json" : "csv";
}

/** What a FOCUS export needs of its source: the zone its instants fall into days in, the currency it must bill. */
export type FileSourceContext = { timeZone?: string; currency?: string };

/**
 * Reads a usage file whole: every row, or every bad line with its reason (nothing when any is bad).
 * A FOCUS export is read only with its source's `timeZone` and `currency`.
 */
export function parseUsageFile(text: string, opts: { format?: UsageFileFormat } & FileSourceContext = {}): ParsedUsageFile {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_FILE_BYTES) return { ok: false, errors: [{ line: 0, reason: `the file is ${(bytes / 1024 / 1024).toFixed(1)} MB; at most 5 MB` }] };
  const body = text.replace(/^\uFEFF/, "");
  const format = opts.format ?? sniffFormat(body);
  return format === "json" ? parseJson(body) : parseCsv(body, opts);
}
