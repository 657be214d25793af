import { maskCaller, maskDestination } from "./mask";
import type { RefusalRow } from "./list";

export const CSV_HEADER = [
  "id",
  "at",
  "last_at",
  "endpoint",
  "gate",
  "count",
  "caller",
  "destination",
  "amount",
  "remaining",
  "ceiling_id",
  "request_id",
  "detail",
] as const;

// A spreadsheet runs a cell starting with = + - @ as a formula, and callers and destinations
// come from the outside world. A leading quote defuses it; plain numbers and phone numbers such
// as +14155550142 are left as they are.
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?[\d*]+(\.\d+)?$/;

export function csvCell(value: string | number | null): string {
  if (value === null) return "";
  let text = String(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(cells: (string | number | null)[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}

/** One refusal as a CSV line; `mask` hides callers and destinations for everyone but admins. */
export function refusalCsvLine(r: RefusalRow, mask: boolean): string {
  return csvLine([
    r.id,
    r.at.toISOString(),
    r.lastAt.toISOString(),
    r.endpointKey,
    r.gate,
    r.count,
    mask ? maskCaller(r.caller) : r.caller,
    mask ? maskDestination(r.destination) : r.destination,
    r.amount,
    r.remaining,
    r.ceilingId,
    r.requestId,
    r.detail,
  ]);
}
