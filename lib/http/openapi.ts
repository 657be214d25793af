import { z } from "zod";
import {
  AlreadyResolved,
  EndpointStatusBody,
  ERROR_CODES,
  errorBody,
  Granted,
  Refusal,
  Released,
  Settled,
  Unavailable,
} from "./openapi-schemas";
import { ReleaseBody, ReserveBody, SettleBody } from "./schemas";

// OpenAPI 3.1 of /api/v1, generated from the very zod schemas that validate the requests (and
// response schemas that the response test holds the handlers to). zod 4's own toJSONSchema is
// used: OpenAPI 3.1 schemas are JSON Schema 2020-12, which it emits natively, so no extra library
// (and no second copy of zod's type model) is needed; the paths around the schemas are plain data.

type Json = Record<string, unknown>;

const schema = (s: z.ZodType, io: "input" | "output"): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" });
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string, description: string) => ({ description, content: { "application/json": { schema: ref(name) } } });

const COMPONENTS: Record<string, { schema: z.ZodType; io: "input" | "output" }> = {
  ReserveBody: { schema: ReserveBody, io: "input" },
  SettleBody: { schema: SettleBody, io: "input" },
  ReleaseBody: { schema: ReleaseBody, io: "input" },
  Granted: { schema: Granted, io: "output" },
  Refusal: { schema: Refusal, io: "output" },
  Unavailable: { schema: Unavailable, io: "output" },
  Settled: { schema: Settled, io: "output" },
  Released: { schema: Released, io: "output" },
  AlreadyResolved: { schema: AlreadyResolved, io: "output" },
  EndpointStatus: { schema: EndpointStatusBody, io: "output" },
  BadRequest: { schema: errorBody(400), io: "output" },
  Unauthorized: { schema: errorBody(401), io: "output" },
  ReserveForbidden: { schema: errorBody(403, ["endpoint_not_allowed", "caller_not_allowed"]), io: "output" },
  ResolveForbidden: { schema: errorBody(403, ["endpoint_not_allowed", "reservation_forbidden"]), io: "output" },
  UnknownEndpoint: { schema: errorBody(404, ["unknown_endpoint"]), io: "output" },
  ReservationNotFound: { schema: errorBody(404, ["reservation_not_found"]), io: "output" },
  IdempotencyConflict: { schema: errorBody(409, ["idempotency_conflict"]), io: "output" },
  EndpointArchived: { schema: errorBody(410, ["endpoint_archived"]), io: "output" },
  TooLarge: { schema: errorBody(413), io: "output" },
};

const common = {
  "400": json("BadRequest", `invalid input; codes: ${ERROR_CODES[400].join(", ")}`),
  "401": json("Unauthorized", `no valid API key; codes: ${ERROR_CODES[401].join(", ")}`),
  "413": json("TooLarge", "the body is over 16 KiB; code: body_too_large"),
  "503": {
    ...json("Unavailable", "fail closed: the service cannot reach its database; nothing was charged; code: unavailable"),
    headers: { "Retry-After": { schema: { type: "integer" }, description: "seconds; 1" } },
  },
};

const reservationId = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } };

function resolveOperation(verb: "settle" | "release") {
  return {
    operationId: `${verb}Reservation`,
    summary: verb === "settle" ? "Correct a reservation to the actual use" : "Give a reservation back (the work did not happen)",
    parameters: [reservationId],
    requestBody: { required: verb === "settle", content: { "application/json": { schema: ref(verb === "settle" ? "SettleBody" : "ReleaseBody") } } },
    responses: {
      "200": json(verb === "settle" ? "Settled" : "Released", `${verb}d; the same ${verb} again is a replay`),
      ...common,
      "403": json("ResolveForbidden", "another account's reservation, or an endpoint the key may not use; codes: endpoint_not_allowed, reservation_forbidden"),
      "404": json("ReservationNotFound", "no such reservation; code: reservation_not_found"),
      "409": json("AlreadyResolved", "released, expired, or settled at another amount; code: already_resolved"),
    },
  };
}

/** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiDocument(serverUrl?: string): Json {
  const schemas: Json = {};
  for (const [name, c] of Object.entries(COMPONENTS)) schemas[name] = schema(c.schema, c.io);
  return {
    openapi: "3.1.0",
    info: {
      title: "Ceilings enforcement API",
      version: "1",
      description:
        "Reserve the worst case of a call before spending, then settle or release. Every error is `{ error: { code, message } }` and charges nothing.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ apiKey: [] }],
    paths: {
      "/api/v1/reservations": {
        post: {
          operationId: "reserve",
          summary: "Reserve units on an endpoint, across every ceiling that applies, all or nothing",
          parameters: [{ name: "X-Request-Id", in: "header", required: false, schema: { type: "string", maxLength: 100 } }],
          requestBody: { required: true, content: { "application/json": { schema: ref("ReserveBody") } } },
          responses: {
            "201": json("Granted", "granted"),
            "200": json("Granted", "the same reservation, replayed for a repeated idempotencyKey"),
            ...common,
            "403": json("ReserveForbidden", "the key may not use this endpoint or caller; codes: endpoint_not_allowed, caller_not_allowed"),
            "404": json("UnknownEndpoint", "no such endpoint; code: unknown_endpoint"),
            "409": json("IdempotencyConflict", "the idempotencyKey was used with other parameters; code: idempotency_conflict"),
            "410": json("EndpointArchived", "an admin archived the endpoint: nothing is charged until it is unarchived; code: endpoint_archived"),
            "429": {
              ...json("Refusal", "refused by a gate: per_call_max, kill_switch, ceiling, cooldown, throttle"),
              headers: { "Retry-After": { schema: { type: "integer" }, description: "seconds until the window ends, when known" } },
            },
          },
        },
      },
      "/api/v1/reservations/{id}/settle": { post: resolveOperation("settle") },
      "/api/v1/reservations/{id}/release": { post: resolveOperation("release") },
      "/api/v1/endpoints/{key}": {
        get: {
          operationId: "endpointStatus",
          summary: "The endpoint's ceilings with value, used, held and remaining in their current windows",
          parameters: [
            { name: "key", in: "path", required: true, schema: { type: "string", maxLength: 64 } },
            { name: "caller", in: "query", required: false, schema: { type: "string" }, description: "a trusted key may name an account" },
          ],
          responses: {
            "200": json("EndpointStatus", "the endpoint's status"),
            "400": common["400"],
            "401": common["401"],
            "403": json("ReserveForbidden", "codes: endpoint_not_allowed, caller_not_allowed"),
            "404": json("UnknownEndpoint", "no such endpoint; code: unknown_endpoint"),
            "503": common["503"],
          },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "ck_<prefix>_<secret>, created on /api-keys" } },
    },
  };
}
