import { z } from "zod";
import {
  AccountBody,
  AlreadyResolved,
  API_ERROR_CODE_NAMES,
  API_ERROR_CODES,
  type ApiErrorCode,
  EndpointStatusBody,
  errorBody,
  Granted,
  IdempotencyConflict,
  PlanAssigned,
  PlansAssigned,
  Refusal,
  Released,
  ReplayResolved,
  RowsRefused,
  LooseningRefused,
  Settled,
  Unavailable,
  Internal,
} from "./openapi-schemas";
import {
  ACCOUNT_PATTERN,
  AccountParam,
  AssignPlanBody,
  BulkAssignBody,
  MAX_REQUEST_ID,
  NO_CONTROL_PATTERN,
  ReleaseBody,
  ReservationIdParam,
  ReserveBody,
  SettleBody,
  TRIMMED_PATTERN,
} from "./schemas";

// OpenAPI 3.1 of /api/v1, generated from the very zod schemas that validate the requests (and
// response schemas that the conformance test holds the handlers to). zod 4's own toJSONSchema is
// used: OpenAPI 3.1 schemas are JSON Schema 2020-12, which it emits natively, so no extra library
// (and no second copy of zod's type model) is needed; the paths around the schemas are plain data.
// Every status of every operation lists exactly the error codes that operation can answer with
// it, and x-error-codes lists every code of the API with its status and meaning.
// app/api/v1/_lib/openapi.int.test.ts produces each of them with a real request.

type Json = Record<string, unknown>;

const schema = (s: z.ZodType, io: "input" | "output"): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" });
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The error codes each operation answers, by status (429 answers with a gate, see Refusal). */
export const OPERATION_ERRORS = {
  reserve: {
    400: [
      "invalid_json",
      "nesting_too_deep",
      "duplicate_field",
      "invalid_characters",
      "unknown_field",
      "invalid_input",
      "invalid_amount",
      "invalid_parts",
      "invalid_ttl",
      "invalid_request_id",
      "caller_required",
      "destination_required",
      "invalid_destination",
    ],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "endpoint_not_allowed", "caller_not_allowed"],
    404: ["unknown_endpoint"],
    409: ["idempotency_conflict", "already_resolved"],
    410: ["endpoint_archived"],
    413: ["body_too_large"],
    429: ["per_call_max", "kill_switch", "ceiling", "cooldown", "throttle", "budget", "blocked"],
    500: ["internal"],
    503: ["unavailable"],
  },
  settleReservation: {
    400: [
      "invalid_reservation_id",
      "invalid_json",
      "nesting_too_deep",
      "duplicate_field",
      "invalid_characters",
      "unknown_field",
      "invalid_input",
      "invalid_amount",
      "invalid_parts",
      "invalid_actual",
    ],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "endpoint_not_allowed", "reservation_forbidden"],
    404: ["reservation_not_found"],
    409: ["already_resolved"],
    413: ["body_too_large"],
    500: ["internal"],
    503: ["unavailable"],
  },
  releaseReservation: {
    400: ["invalid_reservation_id", "invalid_json", "nesting_too_deep", "duplicate_field", "invalid_characters", "unknown_field", "invalid_input"],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "endpoint_not_allowed", "reservation_forbidden"],
    404: ["reservation_not_found"],
    409: ["already_resolved"],
    413: ["body_too_large"],
    500: ["internal"],
    503: ["unavailable"],
  },
  endpointStatus: {
    400: ["invalid_input"],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "endpoint_not_allowed", "caller_not_allowed"],
    404: ["unknown_endpoint"],
    500: ["internal"],
    503: ["unavailable"],
  },
  assignPlan: {
    400: ["invalid_json", "nesting_too_deep", "duplicate_field", "invalid_characters", "unknown_field", "invalid_input", "unknown_plan"],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "plan_not_key_assignable"],
    413: ["body_too_large"],
    500: ["internal"],
    503: ["unavailable"],
  },
  assignPlans: {
    400: ["invalid_json", "nesting_too_deep", "duplicate_field", "invalid_characters", "unknown_field", "invalid_input", "invalid_rows", "too_many"],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "plan_not_key_assignable"],
    413: ["body_too_large"],
    500: ["internal"],
    503: ["unavailable"],
  },
  getAccount: {
    400: ["invalid_input"],
    401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
    403: ["insufficient_scope", "caller_not_allowed"],
    500: ["internal"],
    503: ["unavailable"],
  },
} as const satisfies Record<string, Partial<Record<number, readonly ApiErrorCode[]>>>;
export type OperationId = keyof typeof OPERATION_ERRORS;

const E = OPERATION_ERRORS;
const COMPONENTS: Record<string, { schema: z.ZodType; io: "input" | "output" }> = {
  ReserveBody: { schema: ReserveBody, io: "input" },
  SettleBody: { schema: SettleBody, io: "input" },
  ReleaseBody: { schema: ReleaseBody, io: "input" },
  Granted: { schema: Granted, io: "output" },
  Refusal: { schema: Refusal, io: "output" },
  Unavailable: { schema: Unavailable, io: "output" },
  Internal: { schema: Internal, io: "output" },
  Settled: { schema: Settled, io: "output" },
  Released: { schema: Released, io: "output" },
  IdempotencyConflict: { schema: IdempotencyConflict, io: "output" },
  ReplayResolved: { schema: ReplayResolved, io: "output" },
  AlreadyResolved: { schema: AlreadyResolved, io: "output" },
  EndpointStatus: { schema: EndpointStatusBody, io: "output" },
  ReserveBadRequest: { schema: errorBody(E.reserve[400]), io: "output" },
  SettleBadRequest: { schema: errorBody(E.settleReservation[400]), io: "output" },
  ReleaseBadRequest: { schema: errorBody(E.releaseReservation[400]), io: "output" },
  EndpointStatusBadRequest: { schema: errorBody(E.endpointStatus[400]), io: "output" },
  Unauthorized: { schema: errorBody(E.reserve[401]), io: "output" },
  ReserveForbidden: { schema: errorBody(E.reserve[403]), io: "output" },
  ResolveForbidden: { schema: errorBody(E.settleReservation[403]), io: "output" },
  UnknownEndpoint: { schema: errorBody(E.reserve[404]), io: "output" },
  ReservationNotFound: { schema: errorBody(E.settleReservation[404]), io: "output" },
  EndpointArchived: { schema: errorBody(E.reserve[410]), io: "output" },
  TooLarge: { schema: errorBody(E.reserve[413]), io: "output" },
  AssignPlanBody: { schema: AssignPlanBody, io: "input" },
  BulkAssignBody: { schema: BulkAssignBody, io: "input" },
  PlanAssigned: { schema: PlanAssigned, io: "output" },
  PlansAssigned: { schema: PlansAssigned, io: "output" },
  Account: { schema: AccountBody, io: "output" },
  RowsRefused: { schema: RowsRefused, io: "output" },
  AssignPlanBadRequest: { schema: errorBody(E.assignPlan[400]), io: "output" },
  AssignPlansBadRequest: { schema: errorBody(E.assignPlans[400].filter((c) => c !== "invalid_rows")), io: "output" },
  GetAccountBadRequest: { schema: errorBody(E.getAccount[400]), io: "output" },
  ScopeForbidden: { schema: errorBody(["insufficient_scope"]), io: "output" },
  LooseningRefused: { schema: LooseningRefused, io: "output" },
  GetAccountForbidden: { schema: errorBody(E.getAccount[403]), io: "output" },
};

const NO_STORE = { "Cache-Control": { required: true, schema: { type: "string", const: "no-store" }, description: "no answer of the API is cached" } };
const RETRY_AFTER = (required: boolean, description: string) => ({ "Retry-After": { required, schema: { type: "integer", minimum: 1 }, description } });

function answer(description: string, body: Json, headers: Json = {}): Json {
  return { description, headers: { ...NO_STORE, ...headers }, content: { "application/json": { schema: body } } };
}
const codes = (list: readonly ApiErrorCode[]) => list.map((c) => `\`${c}\` (${API_ERROR_CODES[c].meaning})`).join("; ");
const error = (name: string, list: readonly ApiErrorCode[], what: string, headers: Json = {}) => answer(`${what}: ${codes(list)}`, ref(name), headers);

const unauthorized = error("Unauthorized", E.reserve[401], "no valid API key", {
  "WWW-Authenticate": { required: true, schema: { type: "string", const: 'Bearer realm="ceilings"' } },
});
const tooLarge = error("TooLarge", E.reserve[413], "the body is too large");
const unavailable = answer(`fail closed: ${codes(["unavailable"])}`, ref("Unavailable"), RETRY_AFTER(true, "seconds: 1"));
const internal = answer(`an unexpected error, logged: ${codes(["internal"])}`, ref("Internal"));

/** What a grant leads to: its settle and its release, with the reservationId it answered (OpenAPI links, for stateful clients and fuzzers). */
const GRANT_LINKS = {
  settle: { operationId: "settleReservation", parameters: { id: "$response.body#/reservationId" }, description: "settle the reservation to the actual use" },
  release: {
    operationId: "releaseReservation",
    parameters: { id: "$response.body#/reservationId" },
    description: "give the reservation back: the work did not happen",
  },
};

const reservationId = {
  name: "id",
  in: "path",
  required: true,
  schema: schema(ReservationIdParam, "input"),
  description: "the reservationId a reserve answered",
};

const accountParam = {
  name: "account",
  in: "path",
  required: true,
  schema: schema(AccountParam, "input"),
  description: "the billing account, percent-encoded as a path segment",
};

const assignForbidden = answer(
  "nothing changed: a key without accounts:write (`insufficient_scope`: a key bound to endpoints or to an account never has it), or a move to a looser plan not assignable by key (`plan_not_key_assignable`, each loosening row named: a key cannot ask for a second admin; two admins may mark the plan assignable by key, once)",
  { oneOf: [ref("ScopeForbidden"), ref("LooseningRefused")] },
);

function resolveOperation(verb: "settle" | "release") {
  const op = verb === "settle" ? E.settleReservation : E.releaseReservation;
  return {
    operationId: `${verb}Reservation`,
    summary: verb === "settle" ? "Correct a reservation to the actual use" : "Give a reservation back (the work did not happen)",
    parameters: [reservationId],
    requestBody: {
      required: verb === "settle",
      ...(verb === "release" ? { description: "an empty body or {}" } : {}),
      content: { "application/json": { schema: ref(verb === "settle" ? "SettleBody" : "ReleaseBody") } },
    },
    responses: {
      "200": answer(`${verb}d; the same ${verb} again is a replay (replay: true)`, ref(verb === "settle" ? "Settled" : "Released")),
      "400": error(verb === "settle" ? "SettleBadRequest" : "ReleaseBadRequest", op[400], "invalid input, nothing changed"),
      "401": unauthorized,
      "403": error("ResolveForbidden", op[403], "not this key's to resolve"),
      "404": error("ReservationNotFound", op[404], "no such reservation"),
      "409": answer(
        verb === "settle"
          ? "already settled at another amount, released or expired (`already_resolved`, with its state); a settle above the reserved amount after expiry or release is recorded and charged, and says so with overrun: true and charged"
          : "already settled or expired (`already_resolved`, with its state)",
        ref("AlreadyResolved"),
      ),
      "413": tooLarge,
      "500": internal,
      "503": unavailable,
    },
  };
}

/**
 * Bodies that need one of two fields. Written as two whole objects, each requiring one, so a
 * generator types them exactly: a bare `anyOf: [{ required: [a] }, { required: [b] }]` beside the
 * properties reads as `{...} | unknown` to openapi-typescript, where a misspelt field compiles.
 */
const EITHER: Record<string, [string, string]> = { ReserveBody: ["amount", "parts"], SettleBody: ["actual", "parts"] };

function eitherOf(base: Json, fields: [string, string]): Json {
  const { description, ...object } = base;
  const required = Array.isArray(object.required) ? (object.required as string[]) : [];
  return {
    ...(typeof description === "string" ? { description } : {}),
    anyOf: fields.map((field) => ({ ...object, required: [...required, field] })),
  };
}

/** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiDocument(serverUrl?: string): Json {
  const schemas: Json = {};
  for (const [name, c] of Object.entries(COMPONENTS)) {
    const either = EITHER[name];
    schemas[name] = either ? eitherOf(schema(c.schema, c.io), either) : schema(c.schema, c.io);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Ceilings enforcement API",
      version: "1",
      license: { name: "Proprietary: the API of your own Ceilings deployment", identifier: "LicenseRef-Proprietary" },
      description:
        "Reserve the worst case of a call before spending, then settle or release. Every error is `{ error: { code, message } }` and charges nothing. " +
        "A path answers a method it does not serve with 405 `method_not_allowed` and an Allow header, and OPTIONS with 204 and the same Allow.",
    },
    servers: [
      serverUrl
        ? { url: serverUrl }
        : { url: "/", description: "the server this document is served from: a client resolves it against the URL it fetched the document at" },
    ],
    security: [{ apiKey: [] }],
    paths: {
      "/api/v1/reservations": {
        post: {
          operationId: "reserve",
          summary: "Reserve units on an endpoint, across every ceiling that applies, all or nothing",
          parameters: [
            {
              name: "X-Request-Id",
              in: "header",
              required: false,
              schema: { type: "string", maxLength: MAX_REQUEST_ID, pattern: NO_CONTROL_PATTERN },
              description: `stored on the reservation for tracing; empty counts as absent. Longer than ${MAX_REQUEST_ID} characters or with a control character is refused (400 invalid_request_id), never cut`,
            },
          ],
          requestBody: { required: true, content: { "application/json": { schema: ref("ReserveBody") } } },
          responses: {
            "201": { ...answer("granted", ref("Granted")), links: GRANT_LINKS },
            "200": { ...answer("the same reservation, replayed for a repeated idempotencyKey while it is held", ref("Granted")), links: GRANT_LINKS },
            "400": error("ReserveBadRequest", E.reserve[400], "invalid input, nothing charged"),
            "401": unauthorized,
            "403": error("ReserveForbidden", E.reserve[403], "not this key's to use"),
            "404": error("UnknownEndpoint", E.reserve[404], "no such endpoint"),
            "409": answer(
              "the idempotencyKey was used with other parameters (`idempotency_conflict`), or names a reservation that is settled, released or expired (`already_resolved` with its state and reservationId: not a grant, spend nothing)",
              { oneOf: [ref("IdempotencyConflict"), ref("ReplayResolved")] },
            ),
            "410": error("EndpointArchived", E.reserve[410], "archived"),
            "413": tooLarge,
            "429": answer(
              `refused by a gate, nothing charged; error.code is the gate: ${codes(E.reserve[429])}`,
              ref("Refusal"),
              RETRY_AFTER(false, "seconds until the refusing window ends, when the call would pass then (as retryAt); absent for a kill"),
            ),
            "500": internal,
            "503": unavailable,
          },
        },
      },
      "/api/v1/reservations/{id}/settle": { post: resolveOperation("settle") },
      "/api/v1/reservations/{id}/release": { post: resolveOperation("release") },
      "/api/v1/accounts/{account}": {
        put: {
          operationId: "assignPlan",
          summary: "Put one account on a plan (a trusted key with the accounts:write scope); it binds the account's next reservation",
          description:
            "Counters already used in the current windows stay: an upgrade mid-day gives the new value minus what was used. " +
            "Assigning the default plan's key pins the account to that plan: a later switch of the default moves only accounts never assigned. " +
            "Audited with the key (ck_<prefix> (<name>)); the same plan again is a safe retry (changed: false).",
          parameters: [accountParam],
          requestBody: { required: true, content: { "application/json": { schema: ref("AssignPlanBody") } } },
          responses: {
            "200": answer("assigned, or already on that plan (changed: false)", ref("PlanAssigned")),
            "400": error("AssignPlanBadRequest", E.assignPlan[400], "invalid input, nothing changed"),
            "401": unauthorized,
            "403": assignForbidden,
            "413": tooLarge,
            "500": internal,
            "503": unavailable,
          },
        },
        get: {
          operationId: "getAccount",
          summary: "One account's plan, block and the value that binds it on each per-caller ceiling and per-account budget",
          description: "Needs the accounts:read scope. A trusted key reads any account; a key bound to an account reads its own only.",
          parameters: [accountParam],
          responses: {
            "200": answer("the account (an account never seen is shown on the default plan, known: false)", ref("Account")),
            "400": error("GetAccountBadRequest", E.getAccount[400], "invalid account"),
            "401": unauthorized,
            "403": error("GetAccountForbidden", E.getAccount[403], "not this key's to read"),
            "500": internal,
            "503": unavailable,
          },
        },
      },
      "/api/v1/accounts:bulk": {
        post: {
          operationId: "assignPlans",
          summary: "Put up to 10,000 accounts on plans at once, all or nothing (a trusted key with the accounts:write scope)",
          description:
            "Every row is checked before anything is written; one bad row refuses the body and every bad row is named with its index (the first 100). " +
            "The body may weigh up to 4 MiB. One audit event per account whose plan changed, tied together by batch.",
          requestBody: { required: true, content: { "application/json": { schema: ref("BulkAssignBody") } } },
          responses: {
            "200": answer("every row assigned (or already on its plan)", ref("PlansAssigned")),
            "400": answer(
              `nothing was assigned: rows refused (\`invalid_rows\`, each named) or ${codes(E.assignPlans[400].filter((c) => c !== "invalid_rows"))}`,
              { oneOf: [ref("RowsRefused"), ref("AssignPlansBadRequest")] },
            ),
            "401": unauthorized,
            "403": assignForbidden,
            "413": tooLarge,
            "500": internal,
            "503": unavailable,
          },
        },
      },
      "/api/v1/endpoints/{key}": {
        get: {
          operationId: "endpointStatus",
          summary: "The endpoint's ceilings with value, used, held and remaining in their current windows",
          parameters: [
            { name: "key", in: "path", required: true, schema: { type: "string", minLength: 1, maxLength: 64, pattern: TRIMMED_PATTERN } },
            {
              name: "caller",
              in: "query",
              required: false,
              schema: { type: "string", minLength: 1, maxLength: 200, pattern: ACCOUNT_PATTERN },
              description:
                "a trusted key may name an account (trimmed; no whitespace or control character inside); a key bound to an account may name only its own",
            },
          ],
          responses: {
            "200": answer("the endpoint's status", ref("EndpointStatus")),
            "400": error("EndpointStatusBadRequest", E.endpointStatus[400], "invalid key or caller"),
            "401": unauthorized,
            "403": error("ReserveForbidden", E.endpointStatus[403], "not this key's to read"),
            "404": error("UnknownEndpoint", E.endpointStatus[404], "no such endpoint"),
            "500": internal,
            "503": unavailable,
          },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "ck_<prefix>_<secret>, created by an admin on /api-keys. A key carries scopes, and each call needs one: `reserve` for reservations (reserve, settle, release) and endpoint status, " +
            "on the endpoints the key is bound to; `accounts:read` to read an account; `accounts:write` to assign plans (trusted keys only). " +
            "A key bound to endpoints has `reserve` only: it cannot read or move accounts; a key with accounts scopes has no endpoint. " +
            "A key without the scope a call needs gets 403 `insufficient_scope` and nothing changes.",
        },
      },
    },
    "x-error-codes": API_ERROR_CODE_NAMES.map((code) => ({ code, status: API_ERROR_CODES[code].status, meaning: API_ERROR_CODES[code].meaning })),
  };
}
