import { ApiKeyAccount } from "@/lib/api-keys";
import { apiError, apiJson, EndpointKeyParam, readEndpointStatus } from "@/lib/http";
import type { ApiDeps } from "./deps";
import { authenticateRequest, checkEndpointAccess, unavailableResponse, withinDeadline } from "./guard";

/**
 * GET /api/v1/endpoints/{key}: the endpoint's ceilings with value, used, held and remaining in
 * their current windows. Per-caller ceilings show the key's own account; a trusted service may
 * name one with `?caller=`, else those counters are null.
 */
export async function handleEndpointStatus(request: Request, rawKey: string, deps: ApiDeps): Promise<Response> {
  const auth = await authenticateRequest(request, deps);
  if (auth instanceof Response) return auth;
  const key = EndpointKeyParam.safeParse(rawKey);
  if (!key.success) return apiError(400, "invalid_input", key.error.issues[0]?.message ?? "invalid endpoint key");
  const queryCaller = new URL(request.url).searchParams.get("caller");
  let account = auth.principal.account;
  if (queryCaller !== null) {
    const parsed = ApiKeyAccount.safeParse(queryCaller);
    if (!parsed.success) return apiError(400, "invalid_input", `caller: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    if (!auth.principal.trusted && parsed.data !== account) {
      return apiError(403, "caller_not_allowed", `the API key ck_${auth.principal.prefix} may only read its own account`);
    }
    account = parsed.data;
  }
  try {
    const denied = await checkEndpointAccess(auth.db, auth.principal, key.data);
    if (denied) return denied;
    const status = await withinDeadline(readEndpointStatus(auth.db, { endpointKey: key.data, account }));
    if (!status) return apiError(404, "unknown_endpoint", `unknown endpoint '${key.data}'`);
    return apiJson(200, status);
  } catch (error) {
    return unavailableResponse("endpoint status", error);
  }
}
