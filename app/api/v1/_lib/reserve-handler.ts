import { type Decision, reserve, ReservationInputError } from "@/lib/enforcement";
import type { ApiPrincipal } from "@/lib/api-keys";
import {
  type ApiAnswer,
  describeIssue,
  domainErrorAnswer,
  errorAnswer,
  jsonAnswer,
  parseJsonBody,
  RequestIdHeader,
  ReserveBody,
  retryAfterSeconds,
} from "@/lib/http";
import { checkEndpointAccess } from "./guard";
import { apiRoute } from "./api-route";

/**
 * The billing account charged for the call. A key bound to an account always charges that
 * account, so per-caller quotas follow the account whichever of its keys is used; a trusted
 * service names the caller in the body.
 */
function resolveCaller(principal: ApiPrincipal, bodyCaller: string | undefined): { caller: string | undefined } | ApiAnswer {
  if (principal.trusted || principal.account === null) return { caller: bodyCaller };
  if (bodyCaller !== undefined && bodyCaller !== principal.account) {
    return errorAnswer(403, "caller_not_allowed", `the API key ck_${principal.prefix} may only spend for its own account`);
  }
  return { caller: principal.account };
}

function decisionAnswer(decision: Decision, now: number): ApiAnswer {
  if (decision.status === "resolved") {
    // Not a grant: the key's reservation holds nothing (settled: the work is done).
    return errorAnswer(409, "already_resolved", decision.message, { state: decision.state, reservationId: decision.existingReservationId, replay: true });
  }
  if (decision.status === "granted") {
    const body = { reservationId: decision.reservationId, expiresAt: decision.expiresAt, replay: decision.replay, remaining: decision.remaining };
    return jsonAnswer(decision.replay ? 200 : 201, body);
  }
  const { status: _status, message, gate, ...details } = decision;
  if (gate === "unavailable") {
    // Sent and unanswered, it may have been granted: the client must not read "nothing charged".
    return errorAnswer(
      503,
      "unavailable",
      message,
      { gate, reason: decision.reason ?? "unknown", mayHaveApplied: decision.mayHaveApplied ?? false },
      { "retry-after": "1" },
    );
  }
  const retry = retryAfterSeconds(decision.retryAt, now);
  return errorAnswer(429, gate, message, { gate, ...details }, retry === null ? {} : { "retry-after": String(retry) });
}

/** POST /api/v1/reservations */
export const handleReserve = apiRoute({
  name: "reserve",
  scope: "reserve",
  answerError: (error) =>
    error instanceof ReservationInputError ? domainErrorAnswer(error, error.reservationId ? { reservationId: error.reservationId } : {}) : null,
  handle: async ({ request, deps, db, principal }): Promise<ApiAnswer> => {
    // The caller is trimmed as the library and SQL trim it: a trailing \v names the same account.
    const body = parseJsonBody(request, undefined, ["caller"]);
    if (!body.ok) return errorAnswer(body.status, body.code, body.message);
    const parsed = ReserveBody.safeParse(body.value);
    if (!parsed.success) {
      const issue = describeIssue(parsed.error);
      return errorAnswer(400, issue.code, issue.message);
    }
    const input = parsed.data;
    // Refused rather than cut: a cut id would no longer match the caller's own logs.
    const requestIdHeader = RequestIdHeader.safeParse(request.header("x-request-id") ?? "");
    if (!requestIdHeader.success) return errorAnswer(400, "invalid_request_id", requestIdHeader.error.issues[0]?.message ?? "invalid X-Request-Id");
    const requestId = requestIdHeader.data || undefined;
    const denied = await checkEndpointAccess(db, principal, input.endpoint);
    if (denied) return denied;
    const caller = resolveCaller(principal, input.caller);
    if ("status" in caller) return caller;
    const decision = await reserve(db, {
      endpoint: input.endpoint,
      amount: input.amount,
      parts: input.parts,
      caller: caller.caller,
      destination: input.destination,
      idempotencyKey: input.idempotencyKey,
      ttlSeconds: input.ttlSeconds,
      requestId,
    });
    return decisionAnswer(decision, (deps.now?.() ?? new Date()).getTime());
  },
});
