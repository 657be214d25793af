import type { z } from "zod";
import type { Db } from "@/db/client";
import type { Role } from "@/lib/auth/roles";
import type { AuditActor } from "@/lib/audit/record";
import { CatalogConflictError, type Issue } from "@/lib/limits/errors";
import { CeilingConflictError } from "@/lib/ceilings/errors";
import { ChangeControlError } from "@/lib/control/errors";
import { DomainError, InputError } from "@/lib/errors";
import { strictFormEntries } from "@/lib/http/strict-input";
import { logError } from "@/lib/log/redact";
import type { ActionDeps } from "./action-deps";
import type { ActionState } from "./action-state";
import { checkRole } from "./guards";
import { auditRejectedInput, rejectedForm } from "./rejected-input";
import type { SessionStaff } from "./session";

// One pipeline for every server action: the input boundary, the role check, FormData to fields,
// the one lib/ call, the revalidation, and the mapping of errors to one ActionState. An action
// declares its role, how its form reads and what it runs; nothing else.

export type { ActionState } from "./action-state";

/** What a run gets: who acts (as the audit log names them), the database, and the rest of the deps. */
export type ActionContext = { staff: SessionStaff; actor: AuditActor; db: Db; deps: ActionDeps };

export type ActionResult = {
  message: string;
  revalidate?: string[];
  redirectTo?: string;
  /** A credential shown to the person once (a new API key, a generated password), never stored. */
  secret?: string;
  /** What a read-only action answers for its panel to draw (the what-if's numbers). */
  data?: unknown;
  /** A page the answer points to (a change request just asked for), shown as a link under the message. */
  link?: { href: string; label: string };
};

/** The form's fields: one string each, or every value of a field declared in `lists`. */
export type FormFields = Record<string, string | string[]>;

export type ActionDefinition<Input, Name extends string = string> = {
  role: Role;
  /**
   * The action's name: forms call it by this name (runAction in app/(dashboard)/actions.ts), and a
   * field refused at the input boundary is audited as `<boundary>.rejected`.
   */
  boundary: Name;
  /** The audit action for input refused by `input` (`endpoint.rejected`), so staff see what was tried. */
  rejected?: string;
  /** Fields sent once per chosen item (checkboxes), read as arrays; any other field sent twice is refused. */
  lists?: string[];
  /** Fields whose refused value is never written to the audit log (a webhook URL carries its token). */
  secrets?: string[];
  /** Reads the form: a zod schema over its fields, or a reader that throws a CatalogError naming the field. */
  input: z.ZodType<Input> | ((fields: Record<string, string>) => Input);
  run: (ctx: ActionContext, input: Input) => Promise<ActionResult>;
};

export type ActionCore<Name extends string = string> = ((deps: ActionDeps, formData: FormData) => Promise<ActionState>) & { readonly boundary: Name };

export function isActionCore(value: unknown): value is ActionCore {
  return typeof value === "function" && typeof (value as { boundary?: unknown }).boundary === "string";
}

function stringFields(entries: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of entries) out[key] = value;
  return out;
}

/** The first problem of each field, keyed by its path (`ceilings[1].max`), shown beside the field. */
function fieldErrorsOf(problems: readonly Issue[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const { path, message } of problems) if (path !== "" && !(path in out)) out[path] = message;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A DomainError is shown as it is (with what a conflict found in force); anything else is logged and shown generically. */
export function actionFailure(error: unknown): ActionState {
  if (!(error instanceof DomainError)) {
    logError("server action failed", error);
    return { status: "error", error: "The change could not be saved. The error was logged; try again." };
  }
  const state = {
    status: "error" as const,
    error: error.message,
    code: error.code,
    ...(error instanceof ChangeControlError && error.ask ? { askKind: error.ask.kind } : {}),
  };
  if (error instanceof CatalogConflictError) return { ...state, currentVersion: error.currentVersion };
  if (error instanceof InputError) return { ...state, fieldErrors: fieldErrorsOf(error.problems) };
  if (error instanceof CeilingConflictError) return { ...state, current: { value: error.currentValue, version: error.currentVersion } };
  return state;
}

type Read<Input> = { ok: true; input: Input } | { ok: false; state: ActionState };

function readInput<Input>(definition: ActionDefinition<Input, string>, entries: [string, string][]): Read<Input> {
  // One value per field unless the form sends a list: "last one wins" would let a crafted request
  // say two things at once (id=1&id=2) and have one of them acted on without a word.
  const seen = new Set<string>();
  for (const [name] of entries) {
    if (seen.has(name) && !definition.lists?.includes(name)) return { ok: false, state: rejectedForm(`${name.slice(0, 60)} was sent more than once`) };
    seen.add(name);
  }
  const fields = stringFields(entries);
  if (typeof definition.input === "function") return { ok: true, input: definition.input(fields) };
  const all: FormFields = fields;
  for (const name of definition.lists ?? []) all[name] = entries.filter(([key]) => key === name).map(([, value]) => value);
  const parsed = definition.input.safeParse(all);
  if (parsed.success) return { ok: true, input: parsed.data };
  return { ok: false, state: { status: "error", error: parsed.error.issues.map((i) => i.message).join("; "), code: "invalid_input" } };
}

/**
 * The action's body with its dependencies passed in: tests call it on a test database as a chosen
 * member; runAction (the one `"use server"` entry) calls it by name with the live ones.
 *
 * The boundary check comes before the role check so that what was refused can still be audited
 * for a member who may act (a probing attempt leaves a trace); the role check comes before any
 * read of the form's meaning.
 */
export function defineAction<Input, const Name extends string>(definition: ActionDefinition<Input, Name>): ActionCore<Name> {
  const secrets = new Set(definition.secrets);
  const core = async (deps: ActionDeps, formData: FormData): Promise<ActionState> => {
    // A server action is a public POST endpoint: a forged call may send anything as its form.
    if (!(formData instanceof FormData)) return rejectedForm("the action takes a form");
    const form = strictFormEntries(formData);
    if (!form.ok) {
      const { field, raw, message } = form.rejection;
      await auditRejectedInput(deps, { action: `${definition.boundary}.rejected`, field, raw, message, secrets });
      return rejectedForm(message);
    }
    const { entries } = form;
    const auth = checkRole(await deps.session(), definition.role);
    // Only the message: no form branches on an authorization refusal (HTTP routes use auth.code).
    if (!auth.ok) return { status: "error", error: auth.error };
    const actor: AuditActor = { type: "staff", email: auth.staff.email };
    let result: ActionResult;
    try {
      const read = readInput(definition, entries);
      if (!read.ok) {
        // A value the form's own schema refuses is a refused input too: staff see it.
        if (definition.rejected && read.state.status === "error") {
          await auditRejectedInput(deps, { action: definition.rejected, field: null, fields: stringFields(entries), message: read.state.error, secrets });
        }
        return read.state;
      }
      result = await definition.run({ staff: auth.staff, actor, db: await deps.db(), deps }, read.input);
    } catch (error) {
      // An input error of any domain (its code invalid_*: a raise's end in the past, an unknown
      // plan, a bad phone number) is a refused input: staff see what was tried.
      if (definition.rejected && error instanceof DomainError && error.code.startsWith("invalid_")) {
        await auditRejectedInput(deps, { action: definition.rejected, field: null, fields: stringFields(entries), message: error.message, secrets });
      }
      return actionFailure(error);
    }
    // The change is committed: a failed revalidation must not hide that, nor a secret shown once.
    try {
      for (const path of result.revalidate ?? []) deps.revalidate(path, path === "/" ? "layout" : undefined);
    } catch (error) {
      logError(`revalidation after ${definition.boundary} failed`, error);
    }
    return {
      status: "ok",
      message: result.message,
      ...(result.redirectTo ? { redirectTo: result.redirectTo } : {}),
      ...(result.secret ? { secret: result.secret } : {}),
      ...(result.data !== undefined ? { data: result.data } : {}),
      ...(result.link ? { link: result.link } : {}),
    };
  };
  return Object.assign(core, { boundary: definition.boundary });
}
