import type { ActionDeps } from "@/app/_lib/action-deps";
import { z } from "zod";
import { checkRole } from "@/app/_lib/guards";
import { addStaff, changeStaffRole, disableStaff, enableStaff, StaffAdminError } from "@/lib/auth";
import { PasswordPolicyError } from "@/lib/auth/password";
import { StaffEmail, StaffPassword, StaffRoleInput } from "@/lib/auth/staff-input";
import { logError } from "@/lib/log/redact";
import { strictForm } from "@/app/_lib/strict-form";

// The bodies of the staff server actions, with what they depend on passed in, so tests can run
// them on a real test database with a chosen signed-in member. actions.ts wires the live ones.
export type StaffActionDeps = ActionDeps & { bcryptCost?: number };

export type StaffActionState =
  | { status: "idle" }
  | { status: "ok"; message: string; generatedPassword?: string }
  | { status: "error"; error: string };

const STAFF_PATH = "/staff";

const AddStaffForm = z.object({
  email: StaffEmail,
  role: StaffRoleInput,
  name: z.string().trim().max(200, "name must be at most 200 characters").default(""),
  // A blank password field means "generate one and show it once".
  password: z
    .string()
    .optional()
    .transform((p) => (p === undefined || p === "" ? undefined : p))
    .pipe(StaffPassword.optional()),
});

const ChangeRoleForm = z.object({ email: StaffEmail, role: StaffRoleInput });

const SetDisabledForm = z.object({
  email: StaffEmail,
  disabled: z.enum(["true", "false"], { error: "disabled must be 'true' or 'false'" }),
});

function fields(formData: FormData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of formData.entries()) if (typeof value === "string") out[key] = value;
  return out;
}

function parseError(error: z.ZodError): StaffActionState {
  return { status: "error", error: error.issues.map((i) => i.message).join("; ") };
}

function failure(error: unknown): StaffActionState {
  if (error instanceof StaffAdminError || error instanceof PasswordPolicyError) return { status: "error", error: error.message };
  logError("staff action failed", error);
  return { status: "error", error: "The change could not be saved. The error was logged; try again." };
}

async function addStaffBody(deps: StaffActionDeps, formData: FormData): Promise<StaffActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = AddStaffForm.safeParse(fields(formData));
  if (!parsed.success) return parseError(parsed.error);
  try {
    const { staff, generatedPassword } = await addStaff(await deps.db(), {
      ...parsed.data,
      actor: { type: "staff", email: auth.staff.email },
      bcryptCost: deps.bcryptCost,
    });
    deps.revalidate(STAFF_PATH);
    return generatedPassword
      ? { status: "ok", message: `Added ${staff.email} as ${staff.role}. Their password is shown once:`, generatedPassword }
      : { status: "ok", message: `Added ${staff.email} as ${staff.role}.` };
  } catch (error) {
    return failure(error);
  }
}

async function changeRoleBody(deps: StaffActionDeps, formData: FormData): Promise<StaffActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = ChangeRoleForm.safeParse(fields(formData));
  if (!parsed.success) return parseError(parsed.error);
  try {
    const staff = await changeStaffRole(await deps.db(), { ...parsed.data, actor: { type: "staff", email: auth.staff.email } });
    deps.revalidate(STAFF_PATH);
    return { status: "ok", message: `${staff.email} is now ${staff.role}.` };
  } catch (error) {
    return failure(error);
  }
}

async function setDisabledBody(deps: StaffActionDeps, formData: FormData): Promise<StaffActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = SetDisabledForm.safeParse(fields(formData));
  if (!parsed.success) return parseError(parsed.error);
  try {
    const actor = { type: "staff", email: auth.staff.email } as const;
    const db = await deps.db();
    const staff =
      parsed.data.disabled === "true"
        ? await disableStaff(db, { email: parsed.data.email, actor })
        : await enableStaff(db, { email: parsed.data.email, actor });
    deps.revalidate(STAFF_PATH);
    return { status: "ok", message: `${staff.email} is ${staff.disabledAt ? "disabled" : "enabled"}.` };
  } catch (error) {
    return failure(error);
  }
}

// Every core passes the input boundary first (app/_lib/strict-form.ts).
export const addStaffCore = strictForm("staff.add", addStaffBody);
export const changeRoleCore = strictForm("staff.role", changeRoleBody);
export const setDisabledCore = strictForm("staff.disable", setDisabledBody);
