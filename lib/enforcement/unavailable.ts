// Failing closed: every way the database can fail to answer becomes a refusal with gate
// `unavailable`. When the database itself is down the refusal cannot be stored, so it goes to
// stderr and to these in-process counters (exported for health and metrics).
import { enforcementObserver } from "./observer";

import { describeError, logError } from "@/lib/log/redact";
import type { UnavailableReason } from "@/lib/vocabulary";

export type { UnavailableReason } from "@/lib/vocabulary";

const counts: Record<UnavailableReason, number> = {
  deadline: 0,
  statement_timeout: 0,
  lock_timeout: 0,
  deadlock: 0,
  serialization: 0,
  connection: 0,
  unreplicated: 0,
  not_configured: 0,
  contract_version: 0,
  locked: 0,
  unknown: 0,
};

const CODE_REASONS: Record<string, UnavailableReason> = {
  "57014": "statement_timeout",
  "55P03": "lock_timeout",
  "40P01": "deadlock",
  "40001": "serialization",
  "42883": "not_configured", // undefined function: migrations not applied
  "42P01": "not_configured", // undefined table
  "3D000": "not_configured", // database does not exist
  "3F000": "not_configured", // schema ceilings does not exist: never migrated
  "57P01": "connection",
  "57P03": "connection",
  "53300": "connection", // too many connections
};

function fieldOf(error: unknown, field: string): unknown {
  let current: unknown = error;
  // drizzle wraps driver errors in `cause`; look a few levels down.
  for (let depth = 0; depth < 4 && current && typeof current === "object"; depth++) {
    if (field in current) return (current as Record<string, unknown>)[field];
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function classifyFailure(error: unknown): UnavailableReason {
  const code = fieldOf(error, "code");
  if (typeof code === "string") {
    if (code === "DEADLINE") return "deadline";
    if (code === "CONTRACT_VERSION") return "contract_version";
    if (code === "UNREPLICATED") return "unreplicated";
    if (code in CODE_REASONS) return CODE_REASONS[code] ?? "unknown";
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EPIPE|EHOSTUNREACH|CONNECT_TIMEOUT|CONNECTION_)/.test(code)) {
      return "connection";
    }
    if (code.startsWith("08")) return "connection";
  }
  return "unknown";
}

/**
 * Whether a settle or release that failed with `error` may still have committed: only if its
 * statement was sent and no answer came back. A SQLSTATE the server answered for the statement
 * means it failed and rolled back, except a lost connection (08) or a backend terminated (57P),
 * which can come after a commit (a sync-replication wait cut short commits locally).
 */
export function mayHaveApplied(error: unknown, sent: boolean): boolean {
  if (!sent) return false;
  const code = fieldOf(error, "code");
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith("08") || code.startsWith("57P");
  // No connection was made, so nothing was sent on it.
  if (typeof code === "string" && /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|CONNECT_TIMEOUT)$/.test(code)) return false;
  return true;
}

let lastLogAt = 0;
let suppressed = 0;

/** Counts one unavailable decision and logs it to stderr, at most one line a second. */
export function noteUnavailable(reason: UnavailableReason, requests: number, error?: unknown): void {
  counts[reason] += requests;
  enforcementObserver()?.unavailable(reason, requests);
  const now = Date.now();
  if (now - lastLogAt < 1000) {
    suppressed += requests;
    return;
  }
  lastLogAt = now;
  const detail = error === undefined || error === null ? "" : describeError(error);
  const more = suppressed > 0 ? ` (+${suppressed} more since the last line)` : "";
  suppressed = 0;
  logError(`[ceilings] refused ${requests} reservation(s) as unavailable (${reason})${more} ${detail}`.trim());
}

export function unavailableCounts(): Readonly<Record<UnavailableReason, number>> {
  return { ...counts };
}
