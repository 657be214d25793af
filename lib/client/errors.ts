// Typed errors for the answers a caller must fix: every 4xx code of the HTTP API except the
// refusals (429), which are answers, not errors. Network failures and 503 are never thrown:
// they come back as `{ status: "refused", gate: "unavailable" }` (fail closed).

export const BAD_REQUEST_CODES = [
  "invalid_json",
  "nesting_too_deep",
  "invalid_characters",
  "invalid_input",
  "invalid_amount",
  "invalid_parts",
  "invalid_ttl",
  "invalid_request_id",
  "unknown_field",
  "duplicate_field",
  "caller_required",
  "destination_required",
  "invalid_destination",
  "invalid_reservation_id",
  "invalid_actual",
  "unknown_plan",
  "invalid_rows",
  "too_many",
] as const;
export const UNAUTHORIZED_CODES = ["missing_api_key", "invalid_api_key", "revoked_api_key"] as const;
export const FORBIDDEN_CODES = [
  "insufficient_scope",
  "endpoint_not_allowed",
  "caller_not_allowed",
  "reservation_forbidden",
  "plan_not_key_assignable",
] as const;
export const NOT_FOUND_CODES = ["unknown_endpoint", "reservation_not_found"] as const;
export const GONE_CODES = ["endpoint_archived"] as const;
export const CONFLICT_CODES = ["idempotency_conflict", "already_resolved"] as const;
export const TOO_LARGE_CODES = ["body_too_large"] as const;

export type BadRequestCode = (typeof BAD_REQUEST_CODES)[number];
export type UnauthorizedCode = (typeof UNAUTHORIZED_CODES)[number];
export type ForbiddenCode = (typeof FORBIDDEN_CODES)[number];
export type NotFoundCode = (typeof NOT_FOUND_CODES)[number];
export type GoneCode = (typeof GONE_CODES)[number];
export type ConflictCode = (typeof CONFLICT_CODES)[number];
export type TooLargeCode = (typeof TOO_LARGE_CODES)[number];
/** Every error code of the API; a newer server may send others, kept as plain strings. */
export type ApiErrorCode = BadRequestCode | UnauthorizedCode | ForbiddenCode | NotFoundCode | GoneCode | ConflictCode | TooLargeCode;

/** The base of every error this client throws: the HTTP status, the API's code and its message. */
export class CeilingsError extends Error {
  override name = "CeilingsError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The whole JSON body of the answer (e.g. `state` of an already resolved reservation). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** 400 (and other 4xx the API does not list): the request is malformed; retrying it will not help. */
export class InvalidRequestError extends CeilingsError {
  override name = "InvalidRequestError";
  /** For `invalid_rows` (a bulk assignment): the refused rows, the first 100, each with its index. */
  get rows(): { index: number; account: string; code: string; message: string }[] | undefined {
    return Array.isArray(this.body.rows) ? (this.body.rows as { index: number; account: string; code: string; message: string }[]) : undefined;
  }
}
/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends CeilingsError {
  override name = "AuthenticationError";
}
/** 403: the key may not use this endpoint, caller or reservation. */
export class ForbiddenError extends CeilingsError {
  override name = "ForbiddenError";
}
/** 404: no such endpoint or reservation. */
export class NotFoundError extends CeilingsError {
  override name = "NotFoundError";
}
/** 410: the endpoint is archived; no reservation is decided until an admin unarchives it. */
export class EndpointArchivedError extends CeilingsError {
  override name = "EndpointArchivedError";
}
/** 409: an idempotency key reused with other parameters, or a reservation resolved otherwise. */
export class ConflictError extends CeilingsError {
  override name = "ConflictError";
  /** For `already_resolved`: what the reservation is now (`released`, `expired`, `settled`). */
  get state(): string | undefined {
    return typeof this.body.state === "string" ? this.body.state : undefined;
  }
}
/** 413: the body is over the API's 16 KiB (4 MiB for a bulk assignment). */
export class PayloadTooLargeError extends CeilingsError {
  override name = "PayloadTooLargeError";
}

/** The typed error for a 4xx answer other than 429. */
export function errorFor(status: number, body: Record<string, unknown>): CeilingsError {
  const error = typeof body.error === "object" && body.error !== null ? (body.error as Record<string, unknown>) : {};
  const code = typeof error.code === "string" ? error.code : `http_${status}`;
  const message = typeof error.message === "string" ? error.message : `the Ceilings API answered ${status}`;
  switch (status) {
    case 401:
      return new AuthenticationError(status, code, message, body);
    case 403:
      return new ForbiddenError(status, code, message, body);
    case 404:
      return new NotFoundError(status, code, message, body);
    case 409:
      return new ConflictError(status, code, message, body);
    case 410:
      return new EndpointArchivedError(status, code, message, body);
    case 413:
      return new PayloadTooLargeError(status, code, message, body);
    default:
      return new InvalidRequestError(status, code, message, body);
  }
}
