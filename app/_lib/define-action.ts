import type { z } from "zod";
import type { Role } from "@/lib/auth/roles";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { logError } from "@/lib/log/redact";
import { CatalogConflictError, CatalogError } from "@/lib/catalog/errors";
import { CeilingConflictError, CeilingError } from "@/lib/ceilings/errors";
import type { ActionDeps } from "./action-deps";
import { checkRole } from "./guards";
import { strictForm } from "./strict-form";
import type { SessionStaff } from "./session";

// One pipeline for a server action: the role check, FormData to fields, the one lib/ call, the
// revalidation, and the mapping of typed errors to one ActionState. An action declares its role,
// how its form reads and what it runs; nothing else.

export type ActionState =
  | { status: "idle" }
  | { status: "ok"; message: string; redirectTo?: string }
  | {
      status: "error";
      error: string;
      code?: string;
      /** Per field name, for the message next to the input. */
      fieldErrors?: Record<string, string>;
      /** What is in force after a conflict, so the form can reload it. */
      current?: { value: number; version: number };
      currentVersion?: number;
    };

export type ActionContext = { staff: SessionStaff; actor: AuditActor; deps: ActionDeps };

export type ActionResult = { message: string; revalidate?: string[]; redirectTo?: string };

export type ActionDefinition<Input> = {
  role: Role;
  /** The action's name at the input boundary: a refused field is audited as `<boundary>.rejected`. */
  boundary: string;
  /** The audit action that records input refused as typed (`endpoint.rejected`), so staff see what was tried. */
  rejected?: string;
  /** Reads the form: a zod schema over its fields, or a reader that throws a CatalogError naming the field. */
  input: z.ZodType<Input> | ((fields: Record<string, string>) => Input);
  run: (ctx: ActionContext, input: Input) => Promise<ActionResult>;
};

export type ActionCore = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;

export function formFields(formData: FormData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of formData.entries()) if (typeof value === "string") out[key] = value;
  return out;
}

export function staffActor(staff: SessionStaff): AuditActor {
  return { type: "staff", email: staff.email };
}

/** `ceilings[1].max: ...` → { "ceilings[1].max": "..." }: issues keyed by their path. */
function fieldErrorsOf(issues: string[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const issue of issues) {
    const match = /^([A-Za-z0-9_.[\]]+): (.*)$/.exec(issue);
    if (match?.[1] && match[2] && !(match[1] in out)) out[match[1]] = match[2];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Typed errors are shown as they are; anything else is logged in full and shown generically. */
export function actionFailure(error: unknown): ActionState {
  if (error instanceof CatalogConflictError) return { status: "error", error: error.message, code: error.code, currentVersion: error.currentVersion };
  if (error instanceof CatalogError) return { status: "error", error: error.message, code: error.code, fieldErrors: fieldErrorsOf(error.issues) };
  if (error instanceof CeilingConflictError) {
    return { status: "error", error: error.message, code: error.code, current: { value: error.currentValue, version: error.currentVersion } };
  }
  if (error instanceof CeilingError) return { status: "error", error: error.message, code: error.code };
  logError("server action failed", error);
  return { status: "error", error: "The change could not be saved. The error was logged; try again." };
}

function readInput<Input>(input: ActionDefinition<Input>["input"], fields: Record<string, string>): Input | ActionState {
  if (typeof input === "function") return input(fields);
  const parsed = input.safeParse(fields);
  if (parsed.success) return parsed.data;
  return { status: "error", error: parsed.error.issues.map((i) => i.message).join("; "), code: "invalid_input" };
}

function isState(value: unknown): value is ActionState {
  return typeof value === "object" && value !== null && "status" in value && (value.status === "error" || value.status === "ok" || value.status === "idle");
}

/**
 * The action's body with its dependencies passed in: tests call it on a test database as a chosen
 * member; the `"use server"` file passes the live ones. The strict input boundary (strict-form.ts)
 * runs first, then the role check, the form, the one call and the revalidation.
 */
export function defineAction<Input>(definition: ActionDefinition<Input>): ActionCore {
  const core: ActionCore = async (deps, formData) => {
    const auth = checkRole(await deps.session(), definition.role);
    if (!auth.ok) return { status: "error", error: auth.error };
    try {
      const input = readInput(definition.input, formFields(formData));
      if (isState(input)) return input;
      const result = await definition.run({ staff: auth.staff, actor: staffActor(auth.staff), deps }, input);
      for (const path of result.revalidate ?? []) deps.revalidate(path, path === "/" ? "layout" : undefined);
      return { status: "ok", message: result.message, ...(result.redirectTo ? { redirectTo: result.redirectTo } : {}) };
    } catch (error) {
      if (definition.rejected && error instanceof CatalogError && error.code === "invalid_input") {
        await recordRejected(deps, staffActor(auth.staff), definition.rejected, formFields(formData), error.message);
      }
      return actionFailure(error);
    }
  };
  return strictForm(definition.boundary, core);
}

const MAX_RAW_INPUT = 4000;

/** The refused form as typed, JSON-escaped (control characters included) and bounded in size. */
async function recordRejected(deps: ActionDeps, actor: AuditActor, action: string, fields: Record<string, string>, error: string): Promise<void> {
  const { reason, ...typed } = fields;
  const raw = JSON.stringify(typed);
  try {
    await recordAudit(await deps.db(), {
      ...auditActorFields(actor),
      action,
      endpointKey: null,
      rawInput: raw.length > MAX_RAW_INPUT ? `${raw.slice(0, MAX_RAW_INPUT)}…` : raw,
      reason: reason ? JSON.stringify(reason).slice(1, -1).slice(0, 500) : null,
      details: { error: error.slice(0, 2000) },
    });
  } catch (failure) {
    // The refusal itself already answers the person; a failed audit write is logged, not shown.
    logError("could not record a rejected input", failure);
  }
}
