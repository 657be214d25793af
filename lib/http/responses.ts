import type { DomainError } from "@/lib/errors";
import { type ApiAnswer, responseOf } from "./api-request";
import { ERROR_CODES } from "./openapi-schemas";

// Every answer of the HTTP API is JSON and never cached. Every error has the same shape,
// `{ error: { code, message } }`, with a machine-readable code and a sentence for people.

const JSON_NO_STORE = { "content-type": "application/json", "cache-control": "no-store" };

export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): ApiAnswer {
  return { status, headers: { ...JSON_NO_STORE, ...headers }, body: JSON.stringify(body) };
}

export function errorAnswer(
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): ApiAnswer {
  return jsonAnswer(status, { ...extra, error: { code, message } }, headers);
}

/** errorAnswer as a fetch Response, for routes that are not the API's handlers (the export, the demo). */
export function apiError(...args: Parameters<typeof errorAnswer>): Response {
  return responseOf(errorAnswer(...args));
}

// The status of every code: the API's documented ones (ERROR_CODES, the README's table) and the
// dashboard's own. Every code a DomainError of lib/ can carry is named here or there
// (responses.test.ts reads them from the source and fails on one that is not): an unnamed code
// would be answered 400 whatever it meant.
const DASHBOARD_STATUS: Record<string, number> = {
  unauthenticated: 401,
  forbidden: 403,
  cross_origin: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  duplicate_key: 409,
  exists: 409,
  already_revoked: 409,
  // Change control (lib/changes): a raise needs a second admin, who is never the requester; a
  // request decided, moved under it or past its 24 hours is a conflict with what is in force.
  approval_required: 403,
  own_request: 403,
  not_pending: 409,
  stale: 409,
  expired: 409,
  // What the person asking is to fix, in what they sent or in what it asks of the state (answered
  // 400 before the registry named them, and still): a bad file, address or token, a change to
  // nothing, a kill of a killed ceiling, the last admin or global ceiling, a plan in use.
  ...Object.fromEntries(
    [
      "unchanged",
      "reason_required",
      "confirmation_required",
      "egress_refused",
      "last_admin",
      "empty",
      "invalid_email",
      "invalid_phone",
      "last_global_ceiling",
      "archived",
      "in_use",
      "not_per_caller",
      "not_killed",
      "already_killed",
      "not_a_raise",
      "invalid_idempotency_key",
      "bad_file",
      "wrong_kind",
      "no_location",
      "credential_missing",
      "provider_error",
      "host_refused",
      "provider_shape",
      "currency_mismatch",
      "day_mismatch",
      "invalid_token",
    ].map((code) => [code, 400]),
  ),
};
const STATUS_OF_CODE = new Map<string, number>([
  ...Object.entries(ERROR_CODES).flatMap(([status, codes]) => codes.map((code): [string, number] => [code, Number(status)])),
  ...Object.entries(DASHBOARD_STATUS),
]);

/** The status registered for a code, if any (a test holds every code lib/ raises to being registered). */
export function registeredStatus(code: string): number | undefined {
  return STATUS_OF_CODE.get(code);
}

export function statusOf(code: string): number {
  return STATUS_OF_CODE.get(code) ?? 400;
}

/** A DomainError as the API answers it: the status of its code, its code and its message. */
export function domainErrorAnswer(error: Pick<DomainError, "code" | "message">, extra: Record<string, unknown> = {}): ApiAnswer {
  return errorAnswer(statusOf(error.code), error.code, error.message, extra);
}

/** Whole seconds from `now` until `at`, at least 1, for a Retry-After header; null when unknown. */
export function retryAfterSeconds(at: string | undefined, now = Date.now()): number | null {
  if (!at) return null;
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return null;
  return Math.max(1, Math.ceil((ms - now) / 1000));
}
