import { errorFor } from "./errors.js";
import type { UnavailableReason } from "./types.js";

// One HTTP call of the client: a deadline over every attempt together, retries only for answers
// the contract makes safe to repeat (503 and network failures, resent byte for byte, so a reserve
// keeps its idempotency key), and never a throw for a failure of the network or the server.

export type Call = { method: "GET" | "POST" | "PUT"; path: string; body?: unknown; headers?: Record<string, string> };

export type Outcome =
  | { kind: "answer"; status: number; body: Record<string, unknown>; headers: Headers }
  | { kind: "unavailable"; reason: UnavailableReason; serverReason?: string; message: string; mayHaveApplied: boolean };

export type TransportSettings = {
  baseUrl: string;
  apiKey: string;
  deadlineMs: number;
  maxRetries: number;
  retryDelayMs: number;
  fetch: typeof fetch;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function retryAfterMs(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

async function readBody(response: Response): Promise<Record<string, unknown> | null> {
  try {
    const text = await response.text();
    if (text === "") return {};
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

// Failures that happen before a request can leave: no address, no route, a refused connection,
// or a port fetch will not use.
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Whether the request certainly never reached the server. */
function refusedConnection(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  return (typeof cause?.code === "string" && NEVER_SENT.has(cause.code)) || cause?.message === "bad port";
}

/**
 * Sends `call` until it gets an answer that is not 503, the retries are used up or the deadline
 * passes. A 4xx other than 429 is thrown as a typed error; everything else is returned.
 */
export async function send(settings: TransportSettings, call: Call): Promise<Outcome> {
  const started = Date.now();
  const deadline = started + settings.deadlineMs;
  const url = new URL(call.path, settings.baseUrl).toString();
  const headers: Record<string, string> = { authorization: `Bearer ${settings.apiKey}`, accept: "application/json", ...call.headers };
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  // Whether any attempt may have changed something on the server: one that may have reached it
  // and lost its answer, or a 503 that says so (settle and release; absent means it was not).
  let applied = false;
  const timedOut = (): Outcome => ({ kind: "unavailable", reason: "deadline", message: `no answer within ${settings.deadlineMs} ms`, mayHaveApplied: applied });
  let last: Outcome = timedOut();
  for (let attempt = 0; attempt <= settings.maxRetries; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), left);
    let response: Response;
    try {
      response = await settings.fetch(url, { method: call.method, headers, body, signal: abort.signal });
    } catch (error) {
      clearTimeout(timer);
      // Only a refused connection says the request never left: anything else may have reached it.
      if (!refusedConnection(error)) applied = true;
      if (abort.signal.aborted) return timedOut();
      last = {
        kind: "unavailable",
        reason: "network",
        message: `cannot reach ${settings.baseUrl}: ${error instanceof Error ? error.message : String(error)}`,
        mayHaveApplied: applied,
      };
      await pause(settings, attempt, null, deadline);
      continue;
    }
    const parsed = await readBody(response).finally(() => clearTimeout(timer));
    if (abort.signal.aborted) {
      applied = true;
      return timedOut();
    }
    if (parsed === null) {
      // Not the API's JSON (a proxy's error page): the safe reading is "no", and it may have applied.
      return { kind: "unavailable", reason: "bad_response", message: `${url} answered ${response.status} without a JSON object`, mayHaveApplied: true };
    }
    if (response.status === 503) {
      const error = parsed.error as { message?: unknown } | undefined;
      // The server's word on this attempt (reserve, settle, release): it reached the database and
      // its answer was lost. An earlier attempt that may have applied still counts.
      if (parsed.mayHaveApplied === true) applied = true;
      last = {
        kind: "unavailable",
        reason: "server",
        // The server's own reason (deadline, lock_timeout, connection...), when it gave one.
        ...(typeof parsed.reason === "string" ? { serverReason: parsed.reason } : {}),
        message: typeof error?.message === "string" ? error.message : "the service is unavailable",
        mayHaveApplied: applied,
      };
      await pause(settings, attempt, retryAfterMs(response.headers), deadline);
      continue;
    }
    if (response.status >= 500) {
      // 500 internal: a bug in the server, not an outage; what it changed is unknown. Not retried.
      const error = parsed.error as { message?: unknown } | undefined;
      const said = typeof error?.message === "string" ? `: ${error.message}` : "";
      return { kind: "unavailable", reason: "server", message: `${url} answered ${response.status}${said}`, mayHaveApplied: true };
    }
    if (response.status >= 400 && response.status !== 429) throw errorFor(response.status, parsed);
    return { kind: "answer", status: response.status, body: parsed, headers: response.headers };
  }
  return last;
}

/**
 * Waits before the next attempt: as long as the server's Retry-After says when it gave one (it
 * knows when trying again is worth it), else an exponential backoff from retryDelayMs; never past
 * the deadline.
 */
async function pause(settings: TransportSettings, attempt: number, serverHint: number | null, deadline: number): Promise<void> {
  const wait = Math.min(serverHint ?? settings.retryDelayMs * 2 ** attempt, Math.max(0, deadline - Date.now()));
  if (wait > 0) await sleep(wait);
}
