import type { Db } from "@/db/client";
import { allowsEndpoint, authenticateApiKey, type ApiPrincipal } from "@/lib/api-keys";
import { type ApiAnswer, type ApiRequest, endpointExists, errorAnswer } from "@/lib/http";
import type { ApiDeps } from "./deps";
import { answerBy } from "@/lib/enforcement";
import { env } from "@/lib/env";
import { logError } from "@/lib/log/redact";

export type Authorized = { db: Db; principal: ApiPrincipal };

/**
 * A read a route makes besides the enforcement calls (which keep their own deadline), given up at
 * the same deadline: a silent network answers 503 in time instead of holding the request.
 */
export function withinDeadline<T>(read: Promise<T>): Promise<T> {
  return answerBy(read, env().ENFORCEMENT_DEADLINE_MS);
}

/** Logs a failure in full and answers 503 with a generic message: the caller should retry later. */
export function unavailableAnswer(what: string, error: unknown): ApiAnswer {
  logError(`api: ${what} failed`, error);
  return errorAnswer(503, "unavailable", "the service cannot reach its database right now; nothing was charged, try again shortly", {}, {
    "retry-after": "1",
  });
}

/** The API key of the request, or the 401/503 answer to return as is. */
export async function authenticateRequest(request: ApiRequest, deps: ApiDeps): Promise<Authorized | ApiAnswer> {
  let db: Db;
  try {
    db = await deps.db();
    const auth = await authenticateApiKey(db, request.header("authorization"), deps.now?.() ?? new Date(), deps.keys);
    if (!auth.ok) return errorAnswer(401, auth.code, auth.message, {}, { "www-authenticate": 'Bearer realm="ceilings"' });
    return { db, principal: auth.principal };
  } catch (error) {
    return unavailableAnswer("authentication", error);
  }
}

/**
 * Null when the key may use the endpoint; else 403, or 404 when no such endpoint exists (a key
 * never lists an endpoint that does not exist, so the 404 would otherwise be masked).
 */
export async function checkEndpointAccess(db: Db, principal: ApiPrincipal, endpointKey: string): Promise<ApiAnswer | null> {
  if (allowsEndpoint(principal, endpointKey)) return null;
  if (!(await withinDeadline(endpointExists(db, endpointKey)))) {
    return errorAnswer(404, "unknown_endpoint", `unknown endpoint '${endpointKey}'`);
  }
  return errorAnswer(403, "endpoint_not_allowed", `the API key ck_${principal.prefix} is not allowed to use endpoint '${endpointKey}'`);
}
