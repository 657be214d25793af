import type { ActionDeps } from "@/app/_lib/action-deps";
import { z } from "zod";
import { checkRole } from "@/app/_lib/guards";
import type { SessionStaff } from "@/app/_lib/session";
import { CeilingConflictError, CeilingError, killAll, killEndpoint, restoreEndpoint, type CeilingErrorCode } from "@/lib/ceilings";
import { logError } from "@/lib/log/redact";
import { strictForm } from "@/app/_lib/strict-form";

// The bodies of the ceiling server actions, with what they depend on passed in, so tests run them
// on a real test database as a chosen staff member. actions.ts files wire the live dependencies.
export type ControlActionDeps = ActionDeps;

export type ControlActionState =
  | { status: "idle" }
  | { status: "ok"; message: string }
  | { status: "error"; error: string; code?: CeilingErrorCode; current?: { value: number; version: number } };

export const EndpointKey = z
  .string({ error: "endpoint is required" })
  .trim()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "endpoint must be an endpoint key such as email.subscribe");
export const Reason = z.string({ error: "a reason is required" }).trim().min(1, "a reason is required: say why, for the audit log").max(500);

// Stopping spend is never held up by typing: kill and kill all take an optional reason (the audit
// log says "no reason given"); raising a value (adjust, bounds) still requires one.
const OptionalReason = z.string().trim().max(500).optional();
const KillForm = z.object({ endpointKey: EndpointKey, reason: OptionalReason });
const RestoreForm = z.object({ endpointKey: EndpointKey, reason: OptionalReason });
const KillAllForm = z.object({ reason: OptionalReason });

export function formFields(formData: FormData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of formData.entries()) if (typeof value === "string") out[key] = value;
  return out;
}

export function parseFailure(error: z.ZodError): ControlActionState {
  return { status: "error", error: error.issues.map((i) => i.message).join("; "), code: "invalid_input" };
}

/** Typed errors are shown as they are; anything else is logged in full and shown generically. */
export function actionFailure(error: unknown): ControlActionState {
  if (error instanceof CeilingConflictError) {
    return { status: "error", error: error.message, code: error.code, current: { value: error.currentValue, version: error.currentVersion } };
  }
  if (error instanceof CeilingError) return { status: "error", error: error.message, code: error.code };
  logError("ceiling action failed", error);
  return { status: "error", error: "The change could not be saved. The error was logged; try again." };
}

export function staffActor(staff: SessionStaff) {
  return { type: "staff", email: staff.email } as const;
}

// A kill changes the banner on every page, so the whole dashboard is revalidated.
function revalidateAll(deps: ControlActionDeps): void {
  deps.revalidate("/", "layout");
}

async function killEndpointBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "operator");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = KillForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const changes = await killEndpoint(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateAll(deps);
    return { status: "ok", message: `${parsed.data.endpointKey} is killed: ${changes.length} ceiling(s) set to 0. Every call is refused until restored.` };
  } catch (error) {
    return actionFailure(error);
  }
}

async function restoreEndpointBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "operator");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = RestoreForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const changes = await restoreEndpoint(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateAll(deps);
    const values = changes.map((c) => c.applied.toLocaleString("en-US")).join(", ");
    return { status: "ok", message: `${parsed.data.endpointKey} is restored to the values from before the kill (${values}).` };
  } catch (error) {
    return actionFailure(error);
  }
}

async function killAllBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "operator");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = KillAllForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const changes = await killAll(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateAll(deps);
    const endpoints = new Set(changes.map((c) => c.endpointKey)).size;
    return { status: "ok", message: `Killed ${endpoints} endpoint(s). Restore each on its own when it is safe.` };
  } catch (error) {
    return actionFailure(error);
  }
}

// Every core passes the input boundary first (app/_lib/strict-form.ts).
export const killEndpointCore = strictForm("ceiling.kill", killEndpointBody);
export const restoreEndpointCore = strictForm("ceiling.restore", restoreEndpointBody);
export const killAllCore = strictForm("ceiling.kill_all", killAllBody);
