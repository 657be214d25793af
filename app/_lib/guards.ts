import { hasRole, type Role } from "@/lib/auth/roles";
import type { SessionStaff } from "@/lib/auth/session-staff";
import type { AuthorizationCode } from "@/lib/errors";

export const SIGN_IN_REQUIRED = "Sign in required";

/** A refusal carries its code: HTTP answers 401 or 403 by it, a form shows the message. */
export type Authorization = { ok: true; staff: SessionStaff } | { ok: false; code: AuthorizationCode; error: string };

export function forbiddenMessage(role: Role): string {
  return `Your role (${role}) cannot do this`;
}

/** The one rule behind every guard: signed in, and at least the role asked for. */
export function checkRole(staff: SessionStaff | null, min: Role): Authorization {
  if (!staff) return { ok: false, code: "unauthenticated", error: SIGN_IN_REQUIRED };
  if (!hasRole(staff.role, min)) return { ok: false, code: "forbidden", error: forbiddenMessage(staff.role) };
  return { ok: true, staff };
}
