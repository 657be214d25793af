import { releaseReservation, reservationEndpointKey, ReservationInputError, type Resolution, settleReservation } from "@/lib/enforcement";
import {
  type ApiAnswer,
  describeIssue,
  domainErrorAnswer,
  errorAnswer,
  jsonAnswer,
  parseJsonBody,
  ReleaseBody,
  ReservationIdParam,
  SettleBody,
} from "@/lib/http";
import { checkEndpointAccess, withinDeadline } from "./guard";
import { apiRoute } from "./api-route";

type Verb = "settle" | "release";

function resultAnswer(result: Resolution): ApiAnswer {
  switch (result.status) {
    case "settled":
      return jsonAnswer(200, { status: "settled", reservationId: result.reservationId, actual: result.actual, overrun: result.overrun, replay: result.replay });
    case "released":
      return jsonAnswer(200, { status: "released", reservationId: result.reservationId, replay: result.replay });
    case "not_found":
      return errorAnswer(404, "reservation_not_found", result.message);
    case "forbidden":
      return errorAnswer(403, "reservation_forbidden", result.message);
    case "already_resolved":
      return errorAnswer(409, "already_resolved", result.message, {
        state: result.state,
        ...(result.overrun ? { overrun: true, charged: result.charged, replay: result.replay } : {}),
      });
    case "unavailable":
      return errorAnswer(503, "unavailable", result.message, { reason: result.reason, mayHaveApplied: result.mayHaveApplied }, { "retry-after": "1" });
  }
}

/**
 * POST /api/v1/reservations/{id}/settle and /release. A key bound to an account resolves only
 * that account's reservations (the database checks it on the locked row); a trusted service may
 * resolve any. Either way the reservation's endpoint must be one the key is allowed to use.
 */
export const handleResolve = apiRoute({
  name: "settle or release",
  scope: "reserve",
  answerError: (error) => (error instanceof ReservationInputError ? domainErrorAnswer(error) : null),
  handle: async ({ request, db, principal }, rawId: string, verb: Verb): Promise<ApiAnswer> => {
    const id = ReservationIdParam.safeParse(rawId);
    if (!id.success) return errorAnswer(400, "invalid_reservation_id", `the reservation id must be a UUID, got '${rawId.slice(0, 60)}'`);
    const body = parseJsonBody(request);
    if (!body.ok) return errorAnswer(body.status, body.code, body.message);
    const parsed = verb === "settle" ? SettleBody.safeParse(body.value) : ReleaseBody.safeParse(body.value);
    if (!parsed.success) {
      const issue = describeIssue(parsed.error);
      return errorAnswer(400, issue.code, issue.message);
    }
    const endpointKey = await withinDeadline(reservationEndpointKey(db, id.data));
    if (endpointKey === null) return errorAnswer(404, "reservation_not_found", "no such reservation");
    const denied = await checkEndpointAccess(db, principal, endpointKey);
    if (denied) return denied;
    const caller = principal.trusted ? undefined : (principal.account ?? undefined);
    const result =
      verb === "settle" && ("actual" in parsed.data || "parts" in parsed.data)
        ? await settleReservation(db, { reservationId: id.data, ...parsed.data, caller })
        : await releaseReservation(db, { reservationId: id.data, caller });
    return resultAnswer(result);
  },
});
