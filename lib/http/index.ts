// Helpers of the HTTP API: capped body reading, request schemas, uniform JSON answers, and the
// endpoint status read it serves.
export { MAX_BODY_BYTES, readJsonBody, type BodyError, type BodyResult } from "./body";
export { endpointExists, readEndpointStatus, type CeilingStatus, type EndpointStatus } from "./endpoint-status";
export { apiError, apiJson, errorResponse, retryAfterSeconds, statusOf } from "./responses";
export { openApiDocument } from "./openapi";
export { describeIssue, EndpointKeyParam, ReleaseBody, RequestIdHeader, ReservationIdParam, ReserveBody, SettleBody, type BodyIssue } from "./schemas";
