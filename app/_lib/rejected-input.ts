import { hasRole } from "@/lib/auth/roles";
import { recordAudit } from "@/lib/audit/record";
import { escapeRaw } from "@/lib/http/strict-input";
import { logError } from "@/lib/log/redact";
import type { ActionDeps } from "./action-deps";
import type { ActionState } from "./action-state";

// What a member typed and had refused is audited as `<action>.rejected`, so staff see what was
// tried and a probing attempt leaves a trace. The one writer of these rows for server actions.

const MAX_RAW_INPUT = 4000;
// A refused password or signing secret is still a credential: its value never reaches the log,
// whatever the action; an action names its other secret-bearing fields (`secrets`).
const SECRET_FIELD = /password|secret/i;
const NOT_RECORDED = "(secret not recorded)";

export type RejectedInput = {
  action: string;
  /** The field the refusal names, when one does. */
  field: string | null;
  message: string;
  /** The action's fields whose values are never recorded, beyond anything named like a password or secret. */
  secrets?: ReadonlySet<string>;
} & ({ raw: string } | { fields: Record<string, string> });

export function rejectedForm(message: string): ActionState {
  return { status: "error", error: message, code: "invalid_input" };
}

function typedAs(input: RejectedInput): { rawInput: string; reason: string | null } {
  const secret = (name: string) => SECRET_FIELD.test(name) || (input.secrets?.has(name) ?? false);
  if ("raw" in input) return { rawInput: input.field && secret(input.field) ? NOT_RECORDED : escapeRaw(input.raw), reason: null };
  const { reason, ...typed } = input.fields;
  for (const name of Object.keys(typed)) if (secret(name)) typed[name] = NOT_RECORDED;
  const raw = JSON.stringify(typed);
  return {
    rawInput: raw.length > MAX_RAW_INPUT ? `${raw.slice(0, MAX_RAW_INPUT)}…` : raw,
    reason: reason ? escapeRaw(reason, 500) : null,
  };
}

/** Audits a refused input for a member who may act at all (operator or admin); viewers' tries are not recorded. */
export async function auditRejectedInput(deps: ActionDeps, input: RejectedInput): Promise<void> {
  try {
    const staff = await deps.session();
    if (!staff || !hasRole(staff.role, "operator")) return;
    await recordAudit(await deps.db(), {
      actorType: "staff",
      actor: staff.email,
      action: input.action,
      target: input.field,
      endpointKey: null,
      ...typedAs(input),
      details: { ...(input.field ? { field: input.field } : {}), error: input.message.slice(0, 2000) },
    });
  } catch (error) {
    // The refusal itself already answers the person; a failed audit write is logged, not shown.
    logError(`could not audit ${input.action}`, error);
  }
}
