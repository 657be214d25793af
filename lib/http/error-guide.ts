import type { ApiErrorCode } from "./openapi-schemas";

// For each error code of the API (API_ERROR_CODES, which says what it means and its status): how
// to fix it, and the message of an example answer. docs/errors/<code>.md is generated from both
// (npm run docs:api). Typed over every code: a code added to the registry without its guide fails
// the typecheck.

export type ErrorGuide = { fix: string; example: string };

export const API_ERROR_GUIDE: Record<ApiErrorCode, ErrorGuide> = {
  invalid_json: { fix: "Send the body as UTF-8 JSON, with `Content-Type: application/json`.", example: "the body is not valid JSON" },
  nesting_too_deep: { fix: "Flatten the body: no call of the API takes more than a few levels.", example: "the body nests more than 32 levels deep" },
  duplicate_field: {
    fix: "Send each field once: JSON parsers disagree on which of two copies wins, so the API takes neither.",
    example: "amount appears twice in the body",
  },
  invalid_characters: {
    fix: "Remove control characters and lone surrogates from every string; a caller or destination is printable text.",
    example: "caller holds a control character",
  },
  unknown_field: { fix: "Remove the field, or correct its spelling (the message names it).", example: "idempotencykey is not a field of this call" },
  invalid_input: { fix: "Correct the field the message names, to the rule it states.", example: "caller must be at most 200 characters" },
  invalid_amount: {
    fix: "Send amount as a JSON number: a whole number from 1 to 9007199254740991 (actual: from 0).",
    example: "amount must be a positive whole number, got 2.5",
  },
  invalid_parts: {
    fix: "Name every priced part of the endpoint in parts, and only those (GET /api/v1/endpoints/{key} lists them); or send one amount to a one-part endpoint.",
    example: "llm.chat prices its parts apart (input, output): send parts, not one amount",
  },
  invalid_ttl: {
    fix: "Send ttlSeconds as a whole number from 1 to 86400, or leave it out (300).",
    example: "ttlSeconds must be a whole number between 1 and 86400",
  },
  invalid_request_id: { fix: "Send an X-Request-Id of at most 100 printable characters, or none.", example: "X-Request-Id must be at most 100 characters" },
  caller_required: {
    fix: "Name the account the call is for in caller (a key bound to an account names it for you).",
    example: "endpoint sms.otp has a per-caller ceiling: caller is required",
  },
  destination_required: {
    fix: "Name the destination (the address or number the message goes to) in destination.",
    example: "endpoint email.subscribe has a cooldown: destination is required",
  },
  invalid_destination: {
    fix: "Send a destination of the kind the cooldown counts: an email address, or a phone number in E.164.",
    example: "endpoint email.subscribe has a cooldown per email address: the destination must be one",
  },
  invalid_reservation_id: {
    fix: "Use the reservationId the reserve answered, a UUID, in the path.",
    example: "the reservation id must be a UUID, got 'abc'",
  },
  invalid_actual: {
    fix: "Settle with at most the endpoint's per-call max (the message says it); nothing was charged, so settle again.",
    example: "actual 120 is above the per-call max of 100: nothing was charged; settle with at most 100",
  },
  unknown_plan: { fix: "Name a plan key that exists (the dashboard's Plans page lists them); nothing was assigned.", example: "no plan has the key 'gold'" },
  invalid_rows: {
    fix: "Correct each row listed in rows (by its index) and send the whole assignment again; nothing was assigned.",
    example: "2 rows of the assignment were refused: nothing was assigned",
  },
  too_many: { fix: "Split the assignment into calls of at most 10,000 rows.", example: "a bulk assignment takes at most 10,000 rows" },
  missing_api_key: { fix: "Send `Authorization: Bearer ck_...` with an API key an admin created.", example: "no API key: send Authorization: Bearer ck_..." },
  invalid_api_key: {
    fix: "Use the key exactly as it was shown once when it was created; ask an admin for a new one if it is lost.",
    example: "unknown API key",
  },
  revoked_api_key: { fix: "Ask an admin for a new key: a revoked key is never valid again.", example: "this API key was revoked" },
  insufficient_scope: {
    fix: "Use a key with the scope the message names, or ask an admin to create one; nothing changed.",
    example: "this call needs the scope accounts:write",
  },
  endpoint_not_allowed: { fix: "Use a key allowed on this endpoint, or ask an admin to allow it.", example: "this API key may not use endpoint sms.otp" },
  caller_not_allowed: {
    fix: "Leave caller out (the key names its account) or name that account: a key bound to an account acts for it alone.",
    example: "this API key acts for acct_42 only",
  },
  reservation_forbidden: { fix: "Settle or release only reservations made for this key's account.", example: "this reservation belongs to another account" },
  plan_not_key_assignable: {
    fix: "Ask an admin to move the account from the dashboard or the CLI, or to have two admins mark the plan assignable by key.",
    example: "moving acct_42 to pro loosens its limits: an admin must assign it",
  },
  unknown_endpoint: { fix: "Use an endpoint key of the catalog (the dashboard's overview lists them).", example: "unknown endpoint 'sms.otpp'" },
  reservation_not_found: {
    fix: "Use the reservationId the reserve answered; a reservation is never deleted, so an unknown id was never made here.",
    example: "no such reservation",
  },
  not_found: { fix: "Check the path: the API answers under /api/v1 (the reference lists every operation).", example: "no such route" },
  method_not_allowed: { fix: "Use a method the Allow header lists.", example: "GET is not allowed here: POST" },
  idempotency_conflict: {
    fix: "Use a new idempotencyKey for a new call; retry a call only with its own parameters.",
    example: "this idempotency key was used with other parameters",
  },
  already_resolved: {
    fix: "Nothing to do: the reservation is settled, released or expired (state says which). An overrun settled after it is recorded once.",
    example: "reservation is already settled",
  },
  endpoint_archived: {
    fix: "Ask an admin to unarchive the endpoint, or stop calling it: nothing is charged meanwhile.",
    example: "endpoint fax.send is archived",
  },
  body_too_large: { fix: "Send a smaller body: 16 KiB at most (4 MiB for a bulk assignment).", example: "the body is over 16384 bytes" },
  per_call_max: {
    fix: "Split the work into calls of at most the per-call max, or ask staff to raise it.",
    example: "amount 500 is above the per-call max of 100",
  },
  kill_switch: {
    fix: "Do not retry: staff switched the endpoint off. It answers again when they switch it back on.",
    example: "endpoint sms.otp is switched off",
  },
  ceiling: {
    fix: "Retry after retryAt (the Retry-After header), when the window ends; a call larger than the whole ceiling never fits.",
    example: "ceiling 12 has 3 of 1000 left",
  },
  cooldown: { fix: "Do not send to this destination again until retryAt: it is cooling down.", example: "this destination is cooling down" },
  throttle: { fix: "Slow down: retry after Retry-After, and spread calls over the minute.", example: "more than 60 requests a minute from this caller" },
  budget: {
    fix: "Retry after retryAt when the budget's window ends, or ask staff to raise it; a killed budget or an account at 0 has no retryAt.",
    example: "budget llm.daily has 1200 micros of 200000000 left; this call may cost 4500",
  },
  blocked: {
    fix: "Nothing the caller can do: staff blocked the account. Every endpoint refuses it until they unblock it.",
    example: "account acct_42 is blocked",
  },
  internal: {
    fix: "Retry a reserve only with its idempotencyKey (a settle or release is safe to retry), and report the requestId.",
    example: "an unexpected error; it is logged under requestId 01J...",
  },
  unavailable: {
    fix: "Treat it as no. Retry shortly with the same call (a reserve with its idempotencyKey): its answer says whether the first was applied.",
    example: "the database did not answer in time: nothing was charged",
  },
};
