import { z } from "zod";
import { MAX_PASSWORD_BYTES, MIN_PASSWORD_LENGTH } from "./password";
import { roles } from "./roles";

// Shared by the dashboard's server actions and the staff CLI, so both refuse the same input.
// 254 characters: the longest address SMTP delivers, and what sign-in accepts, so an account can
// always sign in.
export const MAX_STAFF_EMAIL_LENGTH = 254;

export const StaffEmail = z
  .string()
  .trim()
  .toLowerCase()
  .max(MAX_STAFF_EMAIL_LENGTH, `email must be at most ${MAX_STAFF_EMAIL_LENGTH} characters`)
  .pipe(z.email({ error: (issue) => `'${String(issue.input)}' is not an email address` }));
export type StaffEmail = z.infer<typeof StaffEmail>;

export const StaffRoleInput = z.enum(roles, {
  error: (issue) => `role must be one of ${roles.join(", ")}, got '${String(issue.input)}'`,
});
export type StaffRoleInput = z.infer<typeof StaffRoleInput>;

export const StaffPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .refine((p) => Buffer.byteLength(p, "utf8") <= MAX_PASSWORD_BYTES, `password must be at most ${MAX_PASSWORD_BYTES} bytes`);
export type StaffPassword = z.infer<typeof StaffPassword>;

export const AddStaffInput = z.object({
  email: StaffEmail,
  role: StaffRoleInput,
  name: z.string().trim().max(200, "name must be at most 200 characters").default(""),
  password: StaffPassword.optional(),
});
export type AddStaffInput = z.infer<typeof AddStaffInput>;
