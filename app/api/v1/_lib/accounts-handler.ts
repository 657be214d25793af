import type { z } from "zod";
import type { Db } from "@/db/client";
import {
  AccountError,
  type AccountView,
  assignPlan,
  assignPlans,
  getAccount,
  MAX_BULK_ROWS,
  MAX_NAMED_ROWS,
  parseAccountId,
  recordRefusedAssignment,
  refuseTooMany,
} from "@/lib/accounts";
import type { AuditActor } from "@/lib/audit/record";
import { logError } from "@/lib/log/redact";
import { apiKeyActor } from "@/lib/audit/record";
import { type ApiAnswer, describeIssue, domainErrorAnswer, errorAnswer, jsonAnswer, parseJsonBody } from "@/lib/http";
import { AssignPlanBody, BulkAssignBody, MAX_BULK_BODY_BYTES } from "@/lib/http/schemas";
import { withinDeadline } from "./guard";
import type { ApiDeps } from "./deps";
import { apiRoute } from "./api-route";

// The accounts routes: PUT /api/v1/accounts/{account} and POST /api/v1/accounts:bulk assign plans
// (a trusted key with the accounts:write scope: the billing service calls them when a customer
// upgrades), GET /api/v1/accounts/{account} shows an account's plan, block and what binds it (a key
// with accounts:read: trusted, or bound to that account). Each handler's first line checks the
// scope (guard.ts); a key bound to an account never holds accounts:write (creation and the
// api_keys_scopes_write_trusted CHECK refuse it), so no customer moves itself to a better plan.
// Assignments are audited with the key: ck_<prefix> (<key name>).
// A key cannot ask for a second admin: lib/accounts refuses its move of an account to a looser
// plan (plan_not_key_assignable) unless two admins marked that plan assignable by key.

/** The database the account writes run on: the app's pool (no enforcement statement timeout) when given. */
function writeDb(deps: ApiDeps): Promise<Db> {
  return (deps.adminDb ?? deps.db)();
}

/**
 * A body refused at the boundary, answered as is and logged as account.rejected (a trusted key is
 * the billing service: staff should see what it tried). A failed log does not change the answer.
 */
async function refusedBody(deps: ApiDeps, actor: AuditActor, target: string | null, answer: ApiAnswer): Promise<ApiAnswer> {
  const error = (answer.body as { error?: { code?: string; message?: string } }).error;
  try {
    await recordRefusedAssignment(await writeDb(deps), {
      actor,
      target,
      message: `${answer.status} ${error?.code ?? ""}: ${error?.message ?? ""}`,
      details: { status: answer.status, code: error?.code },
    });
  } catch (e) {
    logError("api: logging a refused assignment failed", e);
  }
  return answer;
}

function accountErrorAnswer(error: AccountError): ApiAnswer {
  // A key cannot ask for a second admin: a loosening move to a plan not assignable by key is refused, each row named.
  if (error.code === "plan_not_key_assignable") return errorAnswer(403, error.code, error.message, { rows: error.rows, refused: error.rowCount });
  if (error.rows.length > 0) return errorAnswer(400, "invalid_rows", error.message, { rows: error.rows, refused: error.rowCount });
  return domainErrorAnswer(error);
}

const shownValue = (v: unknown) => (typeof v === "string" ? v.slice(0, 200) : (JSON.stringify(v) ?? "nothing").slice(0, 200));

/**
 * A bulk body whose rows break their shape (a row that is no object, a field missing, of the wrong
 * type or unknown): every such row named with its index, as the rows the library refuses are, when
 * every problem is inside a row; else the body's first problem.
 */
function bulkShapeAnswer(error: z.ZodError, value: unknown): ApiAnswer {
  const inRow = error.issues.every((i) => i.path[0] === "accounts" && typeof i.path[1] === "number");
  const sent = value !== null && typeof value === "object" ? (value as { accounts?: unknown }).accounts : undefined;
  if (!inRow || !Array.isArray(sent)) {
    const issue = describeIssue(error);
    return errorAnswer(400, issue.code, issue.message);
  }
  const byRow = new Map<number, { index: number; account: string; code: "invalid_input" | "unknown_field"; message: string }>();
  for (const issue of error.issues) {
    const index = Number(issue.path[1]);
    if (byRow.has(index)) continue;
    const row: unknown = sent[index];
    const account = row !== null && typeof row === "object" && "account" in row ? shownValue(row.account) : "";
    const unknown = issue.code === "unrecognized_keys";
    const message = unknown
      ? `unknown field(s): ${issue.keys.join(", ")}`
      : issue.path.length > 2
        ? issue.message
        : "each row must be an object {account, plan}";
    byRow.set(index, { index, account, code: unknown ? "unknown_field" : "invalid_input", message });
  }
  const rows = [...byRow.values()].sort((a, b) => a.index - b.index);
  const first = rows[0];
  const message = `${rows.length} of ${sent.length} row(s) refused, nothing was assigned${first ? `: row ${first.index}: ${first.message}` : ""}`;
  return errorAnswer(400, "invalid_rows", message, { rows: rows.slice(0, MAX_NAMED_ROWS), refused: rows.length });
}

/** PUT /api/v1/accounts/{account} with {"plan": "<key>"}. */
export const handleAssignPlan = apiRoute({
  name: "assign plan",
  scope: "accounts:write",
  answerError: (error) => (error instanceof AccountError ? accountErrorAnswer(error) : null),
  handle: async ({ request, deps, principal }, rawAccount: string): Promise<ApiAnswer> => {
    const actor = apiKeyActor(principal);
    const body = parseJsonBody(request);
    if (!body.ok) return refusedBody(deps, actor, rawAccount, errorAnswer(body.status, body.code, body.message));
    const parsed = AssignPlanBody.safeParse(body.value);
    if (!parsed.success) {
      const issue = describeIssue(parsed.error);
      return refusedBody(deps, actor, rawAccount, errorAnswer(400, issue.code, issue.message));
    }
    const result = await assignPlan(await writeDb(deps), { account: rawAccount, planKey: parsed.data.plan, actor });
    return jsonAnswer(200, result);
  },
});

/** POST /api/v1/accounts:bulk with {"accounts": [{"account", "plan"}, ...]}: all or nothing. */
export const handleAssignPlans = apiRoute({
  name: "assign plans",
  scope: "accounts:write",
  answerError: (error) => (error instanceof AccountError ? accountErrorAnswer(error) : null),
  handle: async ({ request, deps, principal }): Promise<ApiAnswer> => {
    // Each row's account is trimmed as a caller is: "acct\u000b" names acct here as in a reservation.
    const actor = apiKeyActor(principal);
    const body = parseJsonBody(request, MAX_BULK_BODY_BYTES, ["accounts[].account"]);
    if (!body.ok) return refusedBody(deps, actor, null, errorAnswer(body.status, body.code, body.message));
    // Counted before any row is read: 10,001 rows are refused whatever is in them.
    const sent = body.value !== null && typeof body.value === "object" ? (body.value as { accounts?: unknown }).accounts : undefined;
    if (Array.isArray(sent) && sent.length > MAX_BULK_ROWS) return accountErrorAnswer(await refuseTooMany(await writeDb(deps), { rows: sent.length, actor }));
    const parsed = BulkAssignBody.safeParse(body.value);
    if (!parsed.success) return refusedBody(deps, actor, null, bulkShapeAnswer(parsed.error, body.value));
    const result = await assignPlans(await writeDb(deps), { rows: parsed.data.accounts, actor });
    return jsonAnswer(200, result);
  },
});

/** What a key bound to the account sees: not who on staff set its plan or blocked it, nor why. */
function forAccountKey(view: AccountView): AccountView {
  return { ...view, planSetBy: null, blocked: view.blocked ? { at: view.blocked.at, by: null, reason: null } : null };
}

/** GET /api/v1/accounts/{account}. */
export const handleGetAccount = apiRoute({
  name: "account",
  scope: "accounts:read",
  answerError: (error) => (error instanceof AccountError ? domainErrorAnswer(error) : null),
  handle: async ({ db, principal }, rawAccount: string): Promise<ApiAnswer> => {
    const account = parseAccountId(rawAccount);
    if (!principal.trusted && principal.account !== account) {
      return errorAnswer(403, "caller_not_allowed", `the API key ck_${principal.prefix} may only read its own account`);
    }
    // A trusted key sees every ceiling and budget; a key bound to the account, those of its endpoints.
    const view = await withinDeadline(getAccount(db, account, principal.trusted ? undefined : principal.endpointKeys));
    return jsonAnswer(200, principal.trusted ? view : forAccountKey(view));
  },
});
