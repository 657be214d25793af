import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { TimedStatement } from "@/db/query-timing";

// Each page's statements, from the file the server appends them to (CEILINGS_QUERY_TIMING, one JSON
// line a statement with the server's time for it, db/query-timing.ts). The bench asks for one page
// at a time and reads what was appended meanwhile, so every line it reads belongs to that render.

const STATEMENT_TARGET_MS = 50;
const SHOWN = 5;

/** Reads the lines appended to `file` since the last call. */
export class StatementLog {
  private offset: number;
  constructor(private readonly file: string) {
    this.offset = sizeOf(file);
  }

  /** The statements written since the last call (a line still being written waits for the next). */
  take(): TimedStatement[] {
    const size = sizeOf(this.file);
    if (size <= this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    const fd = openSync(this.file, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, this.offset);
    } finally {
      closeSync(fd);
    }
    const text = buffer.toString("utf8");
    const end = text.lastIndexOf("\n") + 1;
    this.offset += Buffer.byteLength(text.slice(0, end));
    return text
      .slice(0, end)
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as TimedStatement);
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // the server has not run a statement yet
  }
}

export type StatementStats = { sql: string; perRender: number; median: number; p95: number };

export function percentile(ms: number[], p: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? 0;
}

/** Each distinct statement of the renders (one list a render): how often a render runs it, and its times. */
export function statementStats(renders: TimedStatement[][]): StatementStats[] {
  const bySql = new Map<string, TimedStatement[]>();
  for (const statement of renders.flat()) bySql.set(statement.sql, [...(bySql.get(statement.sql) ?? []), statement]);
  return [...bySql].map(([sql, runs]) => {
    const ms = runs.map((r) => r.ms);
    return {
      sql,
      perRender: runs.length / Math.max(1, renders.length),
      median: percentile(ms, 0.5),
      p95: percentile(ms, 0.95),
    };
  });
}

/**
 * A statement shortened to a line: a long select list becomes "…", since what tells statements
 * apart is what they read and how (the full text is in the server's file).
 */
export function statementLabel(sql: string, width = 120): string {
  const from = outerFrom(sql);
  const short = /^select /i.test(sql) && from > 60 ? `select … ${sql.slice(from + 1)}` : sql;
  return short.length > width ? `${short.slice(0, width - 1)}…` : short;
}

/** Where the statement's own " from " is: the first one outside parentheses and quotes (-1: none). */
function outerFrom(sql: string): number {
  let depth = 0;
  let quote = "";
  for (let i = 0; i < sql.length; i += 1) {
    const c = sql[i] ?? "";
    if (quote) quote = c === quote ? "" : quote;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth += 1;
    else if (c === ")") depth -= 1;
    else if (depth === 0 && /^ from /i.test(sql.slice(i, i + 6))) return i;
  }
  return -1;
}

/**
 * A page's slowest statements and every one over target, slowest first, as lines to print. Judged
 * by the median: on a machine others share, the p95 of nine runs is the unluckiest one.
 */
export function statementLines(stats: StatementStats[]): string[] {
  const sorted = [...stats].sort((a, b) => b.median - a.median || b.p95 - a.p95);
  const shown = sorted.filter((s, i) => i < SHOWN || s.median > STATEMENT_TARGET_MS);
  const lines = shown.map((s) => {
    const times = `${s.median.toFixed(1).padStart(7)} ${s.p95.toFixed(1).padStart(7)} ${formatTimes(s.perRender).padStart(5)}`;
    return `  ${times}  ${statementLabel(s.sql)}${s.median > STATEMENT_TARGET_MS ? `  [OVER ${STATEMENT_TARGET_MS} ms]` : ""}`;
  });
  const header = `   median     p95 times  statement (the server's ms; times a render runs it; the slowest ${Math.min(SHOWN, sorted.length)} of ${sorted.length} distinct, and any over ${STATEMENT_TARGET_MS} ms)`;
  return [header, ...lines];
}

function formatTimes(perRender: number): string {
  return Number.isInteger(perRender) ? `×${perRender}` : `×${perRender.toFixed(1)}`;
}

/** The summary's words on a page's statements: how many a render runs and the slowest one's median. */
export function statementSummary(stats: StatementStats[]): string {
  const count = stats.reduce((n, s) => n + s.perRender, 0);
  const slowest = Math.max(0, ...stats.map((s) => s.median));
  const over = stats.filter((s) => s.median > STATEMENT_TARGET_MS).length;
  return `${Math.round(count)} statements, slowest median ${slowest.toFixed(1)} ms ${over ? `${over} OVER ${STATEMENT_TARGET_MS} ms` : "ok"}`;
}
