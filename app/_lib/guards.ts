import { hasRole, type Role } from "@/lib/auth/roles";
import type { SessionStaff } from "@/lib/auth/session-staff";

export const SIGN_IN_REQUIRED = "Sign in required";

export type Authorization = { ok: true; staff: SessionStaff } | { ok: false; error: string };

export function forbiddenMessage(role: Role): string {
  return `Your role (${role}) cannot do this`;
}

/** The one rule behind every guard: signed in, and at least the role asked for. */
export function checkRole(staff: SessionStaff | null, min: Role): Authorization {
  if (!staff) return { ok: false, error: SIGN_IN_REQUIRED };
  if (!hasRole(staff.role, min)) return { ok: false, error: forbiddenMessage(staff.role) };
  return { ok: true, staff };
}
