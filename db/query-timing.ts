import { appendFileSync } from "node:fs";

// CEILINGS_QUERY_TIMING=<file>: every statement a pool runs appends one JSON line to the file, so
// `npm run bench:dashboard -- --queries <file>` can show each statement a page runs and its time,
// not just the page's. Without the variable nothing changes: this costs production nothing.
//
// The time is the server's own: auto_explain, loaded into each connection of the pool, reports
// every statement's executor time (no planning; a wait for a lock counts) as a NOTICE on the
// connection that ran it. A clock in the app would add the wait for a free connection of the pool
// and for the event loop, which on a page running twenty reads at once is most of what it saw.
// pg_stat_statements would need a restart of the server to load. Needs a superuser (the benchmark's
// DATABASE_URL): session_preload_libraries may not be set by other roles.

/** One line of the file. The SQL carries placeholders ($1), never the values (callers, e-mail addresses). */
export type TimedStatement = { ms: number; sql: string };

type Notice = { message?: string };
type NoticeHandler = (notice: Notice) => void;

/** The startup settings and notice handler that make a pool time its statements into `file`. */
export function queryTiming(file: string, onNotice: NoticeHandler): { connection: Record<string, string>; onNotice: NoticeHandler } {
  return {
    connection: {
      session_preload_libraries: "auto_explain",
      // A string: postgres.js leaves out a startup setting whose value is falsy, and 0 is.
      "auto_explain.log_min_duration": "0",
      // NOTICE goes to the client that ran the statement and, below log_min_messages, not to the server's log.
      "auto_explain.log_level": "notice",
      // JSON, so a statement written on several lines is told apart from its plan.
      "auto_explain.log_format": "json",
    },
    onNotice: (notice) => {
      const timed = timedStatement(notice.message ?? "");
      if (timed) record(file, timed);
      else onNotice(notice); // a notice of our own functions goes where it always went
    },
  };
}

const MAX_SQL = 2000;

/** The statement and its time in an auto_explain notice; undefined for any other notice. */
export function timedStatement(message: string): TimedStatement | undefined {
  const match = /^duration: ([\d.]+) ms {2}plan:\n/.exec(message);
  if (!match?.[1]) return undefined;
  let plan: { "Query Text"?: unknown };
  try {
    plan = JSON.parse(message.slice(match[0].length)) as typeof plan;
  } catch {
    return undefined;
  }
  const text = typeof plan["Query Text"] === "string" ? plan["Query Text"] : "";
  return { ms: Number(match[1]), sql: text.replace(/\s+/g, " ").trim().slice(0, MAX_SQL) };
}

function record(file: string, statement: TimedStatement): void {
  // Synchronous, one write a line: the line is in the file before the statement's result reaches
  // the page (the notice comes first), and lines of statements running at once never interleave.
  appendFileSync(file, `${JSON.stringify(statement)}\n`);
}
