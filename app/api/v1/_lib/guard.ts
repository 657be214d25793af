import { randomUUID } from "node:crypto";
import type { Db } from "@/db/client";
import { allowsEndpoint, authenticateApiKey, type ApiKeyScope, type ApiPrincipal, hasScope } from "@/lib/api-keys";
import { type ApiAnswer, type ApiRequest, endpointExists, errorAnswer } from "@/lib/http";
import type { ApiDeps } from "./deps";
import { answerBy } from "@/lib/enforcement";
import { classifyFailure } from "@/lib/enforcement/unavailable";
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

/**
 * The answer to an exception a handler did not expect, logged in full. A failure to reach the
 * database (a connection, a timeout, a deadline: classifyFailure knows them) before anything was
 * decided is a 503 the caller retries; anything else is a bug, not an outage: a 500 `internal`
 * with the id it is logged under, so a client neither retries blindly nor takes it for a refusal.
 */
export function failureAnswer(what: string, error: unknown): ApiAnswer {
  const reason = classifyFailure(error);
  if (reason === "unknown") {
    const requestId = randomUUID();
    logError(`api: ${what} failed unexpectedly (requestId ${requestId})`, error);
    return errorAnswer(
      500,
      "internal",
      `an unexpected error in the server, logged as ${requestId}; what it changed is unknown: retry a reserve only with its idempotencyKey`,
      { requestId },
    );
  }
  logError(`api: ${what} failed`, error);
  return errorAnswer(
    503,
    "unavailable",
    "the service cannot reach its database right now; nothing was charged, try again shortly",
    { reason, mayHaveApplied: false },
    {
      "retry-after": "1",
    },
  );
}

/** What each route is, as a refusal names it. */
const SCOPE_USE: Record<ApiKeyScope, string> = {
  reserve: "reserve, settle, release or read an endpoint's status",
  "accounts:read": "read accounts",
  "accounts:write": "move accounts between plans",
};

/**
 * The 403 for a key without the scope a route needs (RFC 6750's insufficient_scope, with the
 * scope named in WWW-Authenticate too). Checked before the body is read: nothing changes.
 */
export function insufficientScopeAnswer(principal: ApiPrincipal, scope: ApiKeyScope): ApiAnswer {
  const has = principal.scopes.length > 0 ? principal.scopes.join(", ") : "none";
  return errorAnswer(
    403,
    "insufficient_scope",
    `the API key ck_${principal.prefix} may not ${SCOPE_USE[scope]}: that needs the scope ${scope}, and the key has ${has} (an admin creates a key with it on /api-keys)`,
    {},
    { "www-authenticate": `Bearer realm="ceilings", error="insufficient_scope", scope="${scope}"` },
  );
}

/**
 * The API key of the request when it holds `scope`, or the 401/403/503 answer to return as is.
 * Every /api/v1 route calls this first with the scope it needs, on both servers (the dashboard's
 * routes and npm run api share the handlers): the scope check is written here once.
 */
export async function authenticateRequest(request: ApiRequest, deps: ApiDeps, scope: ApiKeyScope): Promise<Authorized | ApiAnswer> {
  let db: Db;
  try {
    db = await deps.db();
    const auth = await authenticateApiKey(db, request.header("authorization"), deps.now?.() ?? new Date(), deps.keys);
    if (!auth.ok) return errorAnswer(401, auth.code, auth.message, {}, { "www-authenticate": 'Bearer realm="ceilings"' });
    if (!hasScope(auth.principal.scopes, scope)) return insufficientScopeAnswer(auth.principal, scope);
    return { db, principal: auth.principal };
  } catch (error) {
    return failureAnswer("authentication", error);
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
