import type { StaffRole } from "@/db/schema/staff";

// Ordered from least to most powerful: each role can do everything the ones before it can.
export const roles = ["viewer", "operator", "admin"] as const;
export type Role = (typeof roles)[number];

// Keeps this list and the database enum from drifting apart: either direction fails to compile.
const _sameAsSchema: [Role, StaffRole] extends [StaffRole, Role] ? true : never = true;
void _sameAsSchema;

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (roles as readonly string[]).includes(value);
}

/** True when `actual` is at least `min` in the viewer < operator < admin order. */
export function hasRole(actual: Role, min: Role): boolean {
  return roles.indexOf(actual) >= roles.indexOf(min);
}

export const roleAbilities: Record<Role, string> = {
  viewer: "read everything",
  operator: "kill, restore and acknowledge alerts",
  admin: "change values, bounds, API keys and staff",
};
