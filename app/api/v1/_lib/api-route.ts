import type { Db } from "@/db/client";
import type { ApiKeyScope, ApiPrincipal } from "@/lib/api-keys";
import type { ApiAnswer, ApiRequest } from "@/lib/http";
import type { ApiDeps } from "./deps";
import { authenticateRequest, failureAnswer } from "./guard";
import { InputError } from "@/lib/errors";
import { domainErrorAnswer } from "@/lib/http";

/** What a route's work receives: the request, the key that made it (holding the route's scope), its database. */
export type ApiContext = { request: ApiRequest; deps: ApiDeps; db: Db; principal: ApiPrincipal };

export type ApiRoute<P extends unknown[]> = {
  /** What the route does, as an unexpected failure is logged: "reserve", "assign plans". */
  name: string;
  /** The scope the key must hold: checked before the body is read, so a refused key changes nothing. */
  scope: ApiKeyScope;
  /** The route's own answer to an error it knows (a domain error with its extra fields); null: not one. */
  answerError?: (error: unknown) => ApiAnswer | null;
  handle: (ctx: ApiContext, ...params: P) => Promise<ApiAnswer>;
};

/**
 * Every /api/v1 handler is one chain, written here once (as unkey's middleware chain): authenticate
 * the key and check the route's scope (401/403 as is); run the route's work; answer what it throws
 * by the route's own mapping when it knows the error, an InputError as its 400, else as an outage the caller retries (503) or
 * a bug logged under an id (500) (failureAnswer). The route files of app/ and the API server of
 * `npm run api` call the same handler: (request, ...path params, deps).
 */
export function apiRoute<P extends unknown[]>(route: ApiRoute<P>): (request: ApiRequest, ...rest: [...P, ApiDeps]) => Promise<ApiAnswer> {
  return async (request, ...rest) => {
    const deps = rest[rest.length - 1] as ApiDeps;
    const params = rest.slice(0, -1) as P;
    const auth = await authenticateRequest(request, deps, route.scope);
    if ("status" in auth) return auth;
    try {
      return await route.handle({ request, deps, db: auth.db, principal: auth.principal }, ...params);
    } catch (error) {
      // An input refused for what it says is a 400 on every route, whichever domain refused it.
      return route.answerError?.(error) ?? (error instanceof InputError ? domainErrorAnswer(error) : failureAnswer(route.name, error));
    }
  };
}
