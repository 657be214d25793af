import { ApiKeyAccount } from "@/lib/api-keys";
import { type ApiAnswer, EndpointKeyParam, errorAnswer, jsonAnswer, readEndpointStatus } from "@/lib/http";
import { checkEndpointAccess, withinDeadline } from "./guard";
import { apiRoute } from "./api-route";

/**
 * GET /api/v1/endpoints/{key}: the endpoint's ceilings with value, used, held and remaining in
 * their current windows, and the live budgets it belongs to in micros of their currency. Per-caller
 * ceilings and per-account budgets show the key's own account; a trusted service may name one with
 * `?caller=`, else those counters are null.
 */
export const handleEndpointStatus = apiRoute({
  name: "endpoint status",
  scope: "reserve",
  handle: async ({ request, db, principal }, rawKey: string): Promise<ApiAnswer> => {
    const key = EndpointKeyParam.safeParse(rawKey);
    if (!key.success) return errorAnswer(400, "invalid_input", key.error.issues[0]?.message ?? "invalid endpoint key");
    const queryCaller = new URLSearchParams(request.search).get("caller");
    let account = principal.account;
    if (queryCaller !== null) {
      const parsed = ApiKeyAccount.safeParse(queryCaller);
      if (!parsed.success) return errorAnswer(400, "invalid_input", `caller: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      if (!principal.trusted && parsed.data !== account) {
        return errorAnswer(403, "caller_not_allowed", `the API key ck_${principal.prefix} may only read its own account`);
      }
      account = parsed.data;
    }
    const denied = await checkEndpointAccess(db, principal, key.data);
    if (denied) return denied;
    const status = await withinDeadline(readEndpointStatus(db, { endpointKey: key.data, account }));
    if (!status) return errorAnswer(404, "unknown_endpoint", `unknown endpoint '${key.data}'`);
    return jsonAnswer(200, status);
  },
});
