import type { ActionDeps } from "@/app/_lib/action-deps";
import { hasRole } from "@/lib/auth/roles";
import { recordAudit } from "@/lib/audit/record";
import { checkTextFields, escapeRaw, formEntries, type InputRejection } from "@/lib/http/strict-input";
import { logError } from "@/lib/log/redact";

export type FormRejected = { status: "error"; error: string; code: "invalid_input" };

/**
 * The input boundary of a server action: every field is checked (control characters, length)
 * before the action's own schema sees it, and a refusal is a form error naming the field. What
 * an operator or admin typed and had refused is still audited as `<action>.rejected`, with the
 * raw value escaped, so a probing attempt leaves a trace.
 */
export function strictForm<S>(action: string, core: (deps: ActionDeps, formData: FormData) => Promise<S>) {
  return async (deps: ActionDeps, formData: FormData): Promise<S | FormRejected> => {
    const entries = formEntries(formData);
    const rejection = Array.isArray(entries) ? checkTextFields(entries) : entries;
    if (!rejection) return core(deps, formData);
    await auditRejection(deps, action, rejection);
    return { status: "error", error: rejection.message, code: "invalid_input" };
  };
}

async function auditRejection(deps: ActionDeps, action: string, rejection: InputRejection): Promise<void> {
  const staff = await deps.session();
  if (!staff || !hasRole(staff.role, "operator")) return;
  try {
    await recordAudit(await deps.db(), {
      actorType: "staff",
      actor: staff.email,
      action: `${action}.rejected`,
      target: rejection.field,
      details: { field: rejection.field, reason: rejection.message, raw: escapeRaw(rejection.raw) },
    });
  } catch (error) {
    // The refusal stands either way; a failed trace is logged, not shown.
    logError(`could not audit a rejected ${action}`, error);
  }
}
