import { z } from "zod";

// What an API key may do, named on the key itself (issue 33): before scopes, a trusted key bound
// only to one endpoint could move any account to any plan and read who blocked it and why.
//
// - `reserve`: reserve, settle, release and read the status of the endpoints the key is bound to.
// - `accounts:read`: GET /api/v1/accounts/{account} (any account for a trusted key, its own for a
//   key bound to an account).
// - `accounts:write`: PUT /api/v1/accounts/{account} and POST /api/v1/accounts:bulk. It implies
//   nothing else: a billing service that also reads accounts is given both.
//
// A key is either an endpoint key (`reserve`, bound to at least one endpoint) or an accounts key
// (no endpoint, some of `accounts:read`, `accounts:write`): a key bound to endpoints cannot read or
// move accounts, so a key leaked from a service that spends never changes what anyone may spend.
// The database holds the same rules (api_keys_scopes_* CHECKs in migration 0026).

export const API_KEY_SCOPES = ["reserve", "accounts:read", "accounts:write"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export const ACCOUNT_SCOPES: readonly ApiKeyScope[] = ["accounts:read", "accounts:write"];

/** What each scope lets a key do, as the dashboard and the docs say it. */
export const SCOPE_MEANINGS: Record<ApiKeyScope, string> = {
  reserve: "reserve, settle, release and read the status of its endpoints",
  "accounts:read": "read an account's plan, block and limits",
  "accounts:write": "move accounts between plans (one or in bulk)",
};

export const ApiKeyScope = z.string().refine((s): s is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(s), {
  error: (issue) => `unknown scope '${String(issue.input).slice(0, 40)}': a key's scopes are ${API_KEY_SCOPES.join(", ")}`,
});

export const ApiKeyScopes = z
  .array(ApiKeyScope)
  .min(1, "choose at least one scope")
  .transform((scopes) => API_KEY_SCOPES.filter((s) => scopes.includes(s)));

/** Whether a key holding these scopes may make a call that needs `scope`. */
export function hasScope(scopes: readonly ApiKeyScope[], scope: ApiKeyScope): boolean {
  return scopes.includes(scope);
}
