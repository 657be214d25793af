// Helpers of the HTTP API: capped body reading, request schemas, uniform JSON answers, and the
// endpoint status read it serves.
export { apiRequestOf, MAX_BODY_BYTES, responseOf, type ApiAnswer, type ApiRequest } from "./api-request";
export { parseJsonBody, readJsonBody, type BodyError, type BodyResult } from "./body";
export { endpointExists, readEndpointStatus, type CeilingStatus, type EndpointStatus } from "./endpoint-status";
export { apiError, domainErrorAnswer, errorAnswer, jsonAnswer, retryAfterSeconds, statusOf } from "./responses";
export { openApiDocument } from "./openapi";
export { describeIssue, EndpointKeyParam, ReleaseBody, RequestIdHeader, ReservationIdParam, ReserveBody, SettleBody, type BodyIssue } from "./schemas";
