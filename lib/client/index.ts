import { send, type Outcome, type TransportSettings } from "./transport.js";
import type {
  AccountPlanRow,
  AccountView,
  ClientOptions,
  Decision,
  EndpointStatus,
  Gate,
  Parts,
  PlanAssignment,
  PlanAssignments,
  Refused,
  Released,
  ReserveInput,
  Settled,
  Unavailable,
} from "./types.js";

export * from "./errors.js";
export { CeilingsRefusedError, WorstCaseError, type CallOptions, type GuardOptions, type UnavailablePolicy } from "./wrappers/guard.js";
export type * from "./types.js";

/** What the work used: its units, or for an endpoint priced part by part the units of each part. */
export type WorkResult<T> = { actual: number | Parts; result: T };

export type WithReservationResult<T> = { status: "done"; result: T; reservationId: string; settlement: Settled | Unavailable } | Refused;

export type CeilingsClient = {
  /** Reserve the worst case of one call. Never throws for the network: fail closed as gate `unavailable`. */
  reserve(input: ReserveInput): Promise<Decision>;
  /**
   * Correct a reservation to the actual use: its units, or the units of each part for an endpoint
   * priced part by part. Safe to retry: the same settle twice is a replay.
   */
  settle(reservationId: string, actual: number | Parts): Promise<Settled | Unavailable>;
  /** Give a reservation back because the work did not happen. Releasing twice is harmless. */
  release(reservationId: string): Promise<Released | Unavailable>;
  /** Reserve, run `work`, settle with its actual; release if it throws, then rethrow. */
  withReservation<T>(input: ReserveInput, work: (grant: Extract<Decision, { status: "granted" }>) => Promise<WorkResult<T>>): Promise<WithReservationResult<T>>;
  /** The endpoint's ceilings with value, used, held and remaining in their current windows. */
  endpointStatus(endpointKey: string, options?: { caller?: string }): Promise<EndpointStatus | Unavailable>;
  /**
   * Put one account on a plan (a trusted key with the accounts:write scope: any other key gets
   * ForbiddenError `insufficient_scope`). It binds the account's next reservation. Safe to retry.
   */
  setAccountPlan(account: string, plan: string): Promise<PlanAssignment | Unavailable>;
  /**
   * Put up to 10,000 accounts on plans at once, all or none (a trusted key with accounts:write). A refused body
   * throws InvalidRequestError, code `invalid_rows` with `.rows` naming each bad row, or `too_many`.
   * Safe to retry. Its deadline is `deadlineMs` of this call, 30 s by default.
   */
  setAccountPlans(rows: readonly AccountPlanRow[], options?: { deadlineMs?: number }): Promise<PlanAssignments | Unavailable>;
  /** One account's plan, block and what binds it (a key with accounts:read: trusted, or bound to that account). */
  getAccount(account: string): Promise<AccountView | Unavailable>;
};

// A record, not a list, so the compiler refuses a Gate missing here (vocabulary.test.ts ties Gate
// to the server's).
const KNOWN_GATES: Record<Gate, true> = {
  kill_switch: true,
  per_call_max: true,
  ceiling: true,
  cooldown: true,
  throttle: true,
  unavailable: true,
  budget: true,
  blocked: true,
};
const isGate = (v: unknown): v is Gate => typeof v === "string" && Object.hasOwn(KNOWN_GATES, v);

const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The server's own reason for a 503, when it gave one. */
const said = (outcome: Extract<Outcome, { kind: "unavailable" }>): { serverReason?: string } =>
  outcome.serverReason === undefined ? {} : { serverReason: outcome.serverReason };

function unavailableRefusal(outcome: Extract<Outcome, { kind: "unavailable" }>): Refused {
  return { status: "refused", gate: "unavailable", reason: outcome.reason, ...said(outcome), message: outcome.message, mayHaveApplied: outcome.mayHaveApplied };
}

/** The server's deadline (ENFORCEMENT_DEADLINE_MS) and what waiting out its 503 takes: see ClientOptions.deadlineMs. */
export const DEFAULT_DEADLINE_MS = 5000;

function refusal(body: Record<string, unknown>): Refused {
  const gate = isGate(body.gate) ? body.gate : "unavailable";
  const error = body.error as { message?: unknown } | undefined;
  const out: Refused = { status: "refused", gate, message: str(error?.message) ?? `refused by ${gate}` };
  const optional = {
    ceilingId: num(body.ceilingId),
    budgetId: num(body.budgetId),
    budget: str(body.budget),
    currency: str(body.currency),
    cost: num(body.cost),
    limit: num(body.limit),
    used: num(body.used),
    remaining: num(body.remaining),
    retryAt: str(body.retryAt),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) Object.assign(out, { [k]: v });
  return out;
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

/** A client of one Ceilings server with one API key. */
export function createCeilingsClient(options: ClientOptions): CeilingsClient {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== "function") throw new TypeError("no fetch: use Node 18 or later, or pass options.fetch");
  const settings: TransportSettings = {
    baseUrl: options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`,
    apiKey: options.apiKey,
    deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
    maxRetries: options.maxRetries ?? 3,
    retryDelayMs: options.retryDelayMs ?? 50,
    fetch: fetchImpl,
  };

  async function reserve(input: ReserveInput): Promise<Decision> {
    // One key per call, generated before the first attempt, so every retry is the same request.
    const idempotencyKey = input.idempotencyKey ?? randomKey();
    const { requestId, ...fields } = input;
    const outcome = await send(settings, {
      method: "POST",
      path: "api/v1/reservations",
      body: { ...fields, idempotencyKey },
      headers: requestId === undefined ? {} : { "x-request-id": requestId },
    });
    if (outcome.kind === "unavailable") return unavailableRefusal(outcome);
    const b = outcome.body;
    if (outcome.status === 429) return refusal(b);
    const reservationId = str(b.reservationId);
    const expiresAt = str(b.expiresAt);
    if ((outcome.status !== 200 && outcome.status !== 201) || reservationId === undefined || expiresAt === undefined) {
      return { status: "refused", gate: "unavailable", reason: "bad_response", message: `unexpected answer ${outcome.status} to a reservation` };
    }
    // The server's documented shape (its OpenAPI test pins it); not re-validated here to stay dependency-free.
    const remaining = Array.isArray(b.remaining) ? (b.remaining as Extract<Decision, { status: "granted" }>["remaining"]) : [];
    return { status: "granted", reservationId, expiresAt, replay: b.replay === true, remaining, idempotencyKey };
  }

  // Settle and release are idempotent on the server (a repeat is a replay), so their retries are safe too.
  async function resolve(
    reservationId: string,
    verb: "settle" | "release",
    body: unknown,
  ): Promise<{ status: "answer"; body: Record<string, unknown> } | Unavailable> {
    const outcome = await send(settings, { method: "POST", path: `api/v1/reservations/${encodeURIComponent(reservationId)}/${verb}`, body });
    if (outcome.kind === "unavailable") {
      return { status: "unavailable", reason: outcome.reason, ...said(outcome), message: outcome.message, mayHaveApplied: outcome.mayHaveApplied };
    }
    return { status: "answer", body: outcome.body };
  }

  async function settle(reservationId: string, actual: number | Parts): Promise<Settled | Unavailable> {
    const answer = await resolve(reservationId, "settle", typeof actual === "number" ? { actual } : { parts: actual });
    if (answer.status === "unavailable") return answer;
    const b = answer.body;
    const total = typeof actual === "number" ? actual : Object.values(actual).reduce((sum, n) => sum + n, 0);
    return { status: "settled", reservationId, actual: num(b.actual) ?? total, overrun: b.overrun === true, replay: b.replay === true };
  }

  async function release(reservationId: string): Promise<Released | Unavailable> {
    const answer = await resolve(reservationId, "release", {});
    if (answer.status === "unavailable") return answer;
    return { status: "released", reservationId, replay: answer.body.replay === true };
  }

  async function endpointStatus(endpointKey: string, opts: { caller?: string } = {}): Promise<EndpointStatus | Unavailable> {
    const query = opts.caller === undefined ? "" : `?caller=${encodeURIComponent(opts.caller)}`;
    const outcome = await send(settings, { method: "GET", path: `api/v1/endpoints/${encodeURIComponent(endpointKey)}${query}` });
    if (outcome.kind === "unavailable") return { status: "unavailable", reason: outcome.reason, ...said(outcome), message: outcome.message };
    // The server's documented shape, as for `remaining` above.
    return { status: "ok", ...(outcome.body as Omit<EndpointStatus, "status">) };
  }

  function unavailable(outcome: Extract<Outcome, { kind: "unavailable" }>): Unavailable {
    return { status: "unavailable", reason: outcome.reason, ...said(outcome), message: outcome.message, mayHaveApplied: outcome.mayHaveApplied };
  }

  // An assignment is idempotent on the server (the same plan again changes nothing), so the
  // transport's retries of a 503 or a lost answer are safe.
  async function setAccountPlan(account: string, plan: string): Promise<PlanAssignment | Unavailable> {
    const outcome = await send(settings, { method: "PUT", path: `api/v1/accounts/${encodeURIComponent(account)}`, body: { plan } });
    if (outcome.kind === "unavailable") return unavailable(outcome);
    return { status: "assigned", ...(outcome.body as Omit<PlanAssignment, "status">) };
  }

  async function setAccountPlans(rows: readonly AccountPlanRow[], opts: { deadlineMs?: number } = {}): Promise<PlanAssignments | Unavailable> {
    // 10,000 rows are written and audited in one transaction: longer than a reservation's 2 s.
    const deadlineMs = opts.deadlineMs ?? Math.max(settings.deadlineMs, 30_000);
    const outcome = await send(
      { ...settings, deadlineMs },
      { method: "POST", path: "api/v1/accounts:bulk", body: { accounts: rows.map((r) => ({ account: r.account, plan: r.plan })) } },
    );
    if (outcome.kind === "unavailable") return unavailable(outcome);
    return { status: "assigned", ...(outcome.body as Omit<PlanAssignments, "status">) };
  }

  async function getAccount(account: string): Promise<AccountView | Unavailable> {
    const outcome = await send(settings, { method: "GET", path: `api/v1/accounts/${encodeURIComponent(account)}` });
    if (outcome.kind === "unavailable") return { status: "unavailable", reason: outcome.reason, ...said(outcome), message: outcome.message };
    return { status: "ok", ...(outcome.body as Omit<AccountView, "status">) };
  }

  async function withReservation<T>(
    input: ReserveInput,
    work: (grant: Extract<Decision, { status: "granted" }>) => Promise<WorkResult<T>>,
  ): Promise<WithReservationResult<T>> {
    const decision = await reserve(input);
    if (decision.status === "refused") return decision;
    let outcome: WorkResult<T>;
    try {
      outcome = await work(decision);
    } catch (error) {
      // The work did not happen: give the units back (an unreachable server lets the TTL expire it).
      await release(decision.reservationId);
      throw error;
    }
    const settlement = await settle(decision.reservationId, outcome.actual);
    return { status: "done", result: outcome.result, reservationId: decision.reservationId, settlement };
  }

  return { reserve, settle, release, withReservation, endpointStatus, setAccountPlan, setAccountPlans, getAccount };
}
