import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { addStaff, changeStaffRole, disableStaff, enableStaff } from "@/lib/auth";
import { StaffEmail, StaffPassword, StaffRoleInput } from "@/lib/auth/staff-input";

// Staff changes: admins only.

const STAFF = ["/staff"];

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

export const addStaffCore = defineAction({
  role: "admin",
  boundary: "staff.add",
  input: AddStaffForm,
  run: async ({ actor, db, deps }, input) => {
    const { staff, generatedPassword } = await addStaff(db, { ...input, actor, bcryptCost: deps.bcryptCost });
    return generatedPassword
      ? { message: `Added ${staff.email} as ${staff.role}. Their password is shown once:`, secret: generatedPassword, revalidate: STAFF }
      : { message: `Added ${staff.email} as ${staff.role}.`, revalidate: STAFF };
  },
});

export const changeRoleCore = defineAction({
  role: "admin",
  boundary: "staff.role",
  input: z.object({ email: StaffEmail, role: StaffRoleInput }),
  run: async ({ actor, db }, input) => {
    const staff = await changeStaffRole(db, { ...input, actor });
    return { message: `${staff.email} is now ${staff.role}.`, revalidate: STAFF };
  },
});

export const setDisabledCore = defineAction({
  role: "admin",
  boundary: "staff.disable",
  input: z.object({ email: StaffEmail, disabled: z.enum(["true", "false"], { error: "disabled must be 'true' or 'false'" }) }),
  run: async ({ actor, db }, input) => {
    const staff = input.disabled === "true" ? await disableStaff(db, { email: input.email, actor }) : await enableStaff(db, { email: input.email, actor });
    return { message: `${staff.email} is ${staff.disabledAt ? "disabled" : "enabled"}.`, revalidate: STAFF };
  },
});
