// The reservation protocol every wrapper runs around a provider call: reserve the worst case,
// call, settle to what the provider reported, release when the call did not happen. One place for
// the decisions a wrapper must not get wrong: a refusal is a typed error, an unreachable Ceilings
// fails closed unless the wrapper was told otherwise, a lost settle is retried with the same
// reservation id (settle is idempotent), and when nothing trustworthy was reported the
// reservation keeps its worst case (the safe direction).
import type { CeilingsClient } from "../index.js";
import type { Gate, Parts, Refused, Settled, Unavailable } from "../types.js";

/** What to do when Ceilings cannot be reached: refuse the call (the default) or run it unreserved. */
export type UnavailablePolicy = "fail_closed" | "fail_open";

/** What every wrapper takes. */
export type GuardOptions = {
  ceilings: CeilingsClient;
  /** The endpoint's key in the catalog, e.g. `llm.gpt-4o`. */
  endpoint: string;
  /** The account the call is for (per-account ceilings, budgets, plans), when the key may name one. */
  caller?: string;
  /**
   * `fail_closed` (default): an unreachable Ceilings refuses the call with gate `unavailable`, so the
   * ceiling holds during an outage. `fail_open` runs the call unreserved and unsettled: the spend is
   * not counted; choose it only for calls whose loss costs more than an uncounted bill.
   */
  onUnavailable?: UnavailablePolicy;
  /** Seconds the reservation is held before the sweeper expires it (the server's default if absent). */
  ttlSeconds?: number;
  /** Attempts of a settle or release that got no answer, each with the same reservation id. Default 5. */
  resolveAttempts?: number;
  /** Told of a settle or release given up after every attempt: the reservation keeps its worst case until it expires. */
  onResolveFailed?: (failure: { reservationId: string; verb: "settle" | "release"; answer: Unavailable }) => void;
};

/** Per call: passed as `ceilings` in the SDK's request options, and never sent to the provider. */
export type CallOptions = {
  caller?: string;
  destination?: string;
  /** Reused on every retry of this call (a retried call is never charged twice). A random UUID when absent. */
  idempotencyKey?: string;
};

/** The call was refused by a gate: nothing was sent to the provider. */
export class CeilingsRefusedError extends Error {
  override name = "CeilingsRefusedError";
  readonly gate: Gate;
  /** The refusing limit (units, calls, or micros of a budget's currency), when one refused. */
  readonly limit?: number;
  readonly remaining?: number;
  /** When the same call would pass (the refusing window's end); absent when waiting will not help. */
  readonly retryAt?: string;
  constructor(readonly refusal: Refused) {
    super(`Ceilings refused ${refusal.gate}: ${refusal.message}`);
    this.gate = refusal.gate;
    if (refusal.limit !== undefined) this.limit = refusal.limit;
    if (refusal.remaining !== undefined) this.remaining = refusal.remaining;
    if (refusal.retryAt !== undefined) this.retryAt = refusal.retryAt;
  }
}

/** The call's worst case cannot be stated (no output bound, an input that cannot be counted): nothing was sent. */
export class WorstCaseError extends Error {
  override name = "WorstCaseError";
}

/** What a reservation is charged in: `amount` units, or units per priced part. */
export type Charge = { amount: number } | { parts: Parts };

/** A held reservation, or a call let through unreserved by `fail_open` (every method a no-op). */
export type Hold = {
  readonly reservationId: string | null;
  readonly worstCase: Charge;
  settle(actual: Charge): Promise<void>;
  /** The work did not happen: give the whole reservation back. */
  release(): Promise<void>;
  /** Nothing trustworthy was reported: settle at the worst case (what the reservation holds). */
  keepWorstCase(): Promise<void>;
};

const DEFAULT_RESOLVE_ATTEMPTS = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reserves `worstCase` for one call, or throws CeilingsRefusedError. */
export async function hold(options: GuardOptions, call: CallOptions | undefined, worstCase: Charge): Promise<Hold> {
  const caller = call?.caller ?? options.caller;
  const decision = await options.ceilings.reserve({
    endpoint: options.endpoint,
    ...worstCase,
    ...(caller === undefined ? {} : { caller }),
    ...(call?.destination === undefined ? {} : { destination: call.destination }),
    ...(call?.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
    ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }),
  });
  if (decision.status === "refused") {
    if (decision.gate === "unavailable" && options.onUnavailable === "fail_open") return unreserved(worstCase);
    throw new CeilingsRefusedError(decision);
  }
  const reservationId = decision.reservationId;
  let done = false;
  const attempts = options.resolveAttempts ?? DEFAULT_RESOLVE_ATTEMPTS;
  // Settle and release are idempotent on the server: a retry after a lost answer is a replay.
  async function resolve(verb: "settle" | "release", run: () => Promise<Settled | Unavailable | { status: "released" }>): Promise<void> {
    if (done) return;
    done = true;
    let answer: Settled | Unavailable | { status: "released" } = await run();
    for (let attempt = 1; answer.status === "unavailable" && attempt < attempts; attempt++) {
      await sleep(Math.min(100 * 2 ** attempt, 2000));
      answer = await run();
    }
    if (answer.status === "unavailable") options.onResolveFailed?.({ reservationId, verb, answer });
  }
  const settleTo = (actual: Charge) => resolve("settle", () => options.ceilings.settle(reservationId, "amount" in actual ? actual.amount : actual.parts));
  return {
    reservationId,
    worstCase,
    settle: settleTo,
    release: () => resolve("release", () => options.ceilings.release(reservationId)),
    keepWorstCase: () => settleTo(worstCase),
  };
}

function unreserved(worstCase: Charge): Hold {
  const none = async () => undefined;
  return { reservationId: null, worstCase, settle: none, release: none, keepWorstCase: none };
}

/** Splits the SDK's request options into ours (`ceilings`) and the provider's. */
export function splitOptions<T extends object>(requestOptions: (T & { ceilings?: CallOptions }) | undefined): [CallOptions | undefined, T | undefined] {
  if (requestOptions === undefined) return [undefined, undefined];
  const { ceilings, ...rest } = requestOptions;
  return [ceilings, rest as T];
}

/**
 * Units per usage field, mapped onto the endpoint's part names. Fields mapped to the same name add
 * up; every name mapped appears (0 when unused), because a parts settle names every part.
 * `mapping === "amount"` charges the total of every field as units (an endpoint with one price).
 */
export function charge<F extends string>(mapping: Record<F, string> | "amount", units: Partial<Record<F, number>>): Charge {
  if (mapping === "amount") return { amount: Object.values<number | undefined>(units).reduce<number>((sum, n) => sum + (n ?? 0), 0) };
  const parts: Parts = {};
  for (const [field, name] of Object.entries(mapping) as [F, string][]) parts[name] = (parts[name] ?? 0) + (units[field] ?? 0);
  return { parts };
}
