import { InputError } from "@/lib/errors";
import { AccountError, MAX_NAMED_ROWS, type RowProblem } from "./errors";
import type { AssignmentRow } from "./assign";

// The file `ceilings accounts bulk <file>` reads: CSV (account,plan per line, an optional header
// line "account,plan", RFC 4180 quotes for an account holding a comma or a quote) or JSON (a list
// of {"account", "plan"}, or the API's body {"accounts": [...]}). Only the shape is read here; the
// rows' rules (account id, plan, duplicates, at most 10,000) are assignPlans', as for the API.

export type AssignmentFile = {
  rows: AssignmentRow[];
  /** The line each row is on (CSV), for messages a person can find in the file; null for JSON. */
  lines: (number | null)[];
};

/** One CSV record's fields, or an error message. Quotes as RFC 4180: "a,b" and "say ""hi""". */
function csvFields(line: string): string[] | string {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (line[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= line.length) return "a quoted field is not closed";
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += line[i];
        i += 1;
      }
      if (i < line.length && line[i] !== ",") return "a quoted field must end at a comma or the end of the line";
    } else {
      const comma = line.indexOf(",", i);
      const end = comma < 0 ? line.length : comma;
      field = line.slice(i, end);
      if (field.includes('"')) return 'a quote inside an unquoted field (quote the whole field and double the quote: "a""b")';
      i = end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i += 1; // the comma
  }
}

function parseCsv(text: string): AssignmentFile {
  const rows: AssignmentRow[] = [];
  const lines: number[] = [];
  const problems: RowProblem[] = [];
  const all = text.replace(/^\ufeff/, "").split(/\r?\n/);
  all.forEach((line, n) => {
    if (line.trim() === "") return;
    const fields = csvFields(line);
    if (typeof fields === "string" || fields.length !== 2) {
      problems.push({
        index: rows.length + problems.length,
        account: line.slice(0, 60),
        code: "invalid_input",
        message: `line ${n + 1}: ${typeof fields === "string" ? fields : `expected 2 fields (account,plan), got ${fields.length}`}`,
      });
      return;
    }
    const [account = "", plan = ""] = fields;
    // A header line names the columns: it is no account.
    if (rows.length === 0 && problems.length === 0 && account.trim().toLowerCase() === "account" && plan.trim().toLowerCase() === "plan") return;
    rows.push({ account, plan });
    lines.push(n + 1);
  });
  if (problems.length > 0)
    throw new AccountError(
      "invalid_rows",
      `${problems.length} line(s) of the file are not account,plan: nothing was assigned`,
      problems.slice(0, MAX_NAMED_ROWS),
      problems.length,
    );
  return { rows, lines };
}

/** Exactly {"account": text, "plan": text}: an extra field may be a misspelling of something meant. */
function isRow(row: unknown): row is AssignmentRow {
  if (row === null || typeof row !== "object" || Array.isArray(row) || Object.keys(row).length !== 2) return false;
  const r = row as Record<string, unknown>;
  return typeof r.account === "string" && typeof r.plan === "string";
}

function parseJson(text: string): AssignmentFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw InputError.of(`the file is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const list = Array.isArray(value) ? value : value !== null && typeof value === "object" && "accounts" in value ? value.accounts : undefined;
  if (!Array.isArray(list)) throw InputError.of('the JSON file must be a list of {"account", "plan"} or {"accounts": [...]}');
  const rows: AssignmentRow[] = [];
  const problems: RowProblem[] = [];
  list.forEach((row: unknown, index) => {
    if (!isRow(row)) {
      problems.push({
        index,
        account: JSON.stringify(row)?.slice(0, 60) ?? "",
        code: "invalid_input",
        message: 'each row must be {"account": "<text>", "plan": "<key>"} and nothing else',
      });
      return;
    }
    rows.push({ account: row.account, plan: row.plan });
  });
  if (problems.length > 0)
    throw new AccountError(
      "invalid_rows",
      `${problems.length} row(s) of the file are not {account, plan}: nothing was assigned`,
      problems.slice(0, MAX_NAMED_ROWS),
      problems.length,
    );
  return { rows, lines: rows.map(() => null) };
}

/** The rows of an assignment file, by its name's extension (.csv or .json). */
export function parseAssignmentFile(name: string, text: string): AssignmentFile {
  if (/\.json$/i.test(name)) return parseJson(text);
  if (/\.csv$/i.test(name)) return parseCsv(text);
  throw InputError.of(`${name}: the file must be .csv (account,plan per line) or .json`);
}
