// The door to staff authentication: passwords, roles, sign-in checks and staff administration.
export { GENERIC_SIGN_IN_ERROR, normalizeEmail, verifyCredentials } from "./verify";
export type { SignInFailureReason, VerifyOptions, VerifyResult } from "./verify";
export { generatePassword, hashPassword, PRODUCTION_BCRYPT_COST, verifyPassword } from "./password";
export { hasRole, isRole, roleAbilities, roles } from "./roles";
export type { Role } from "./roles";
export { loadSessionStaff } from "./session-staff";
export { defaultSessionLifetimes, endSession, startSession, touchSession, type SessionLifetimes } from "./sessions";
export type { AuthenticatedStaff, SessionStaff } from "./session-staff";
export { addStaff, changeStaffRole, disableStaff, enableStaff, listStaff, setStaffPassword } from "./staff-admin";
export type { StaffSummary } from "./staff-admin";
export { StaffAdminError } from "./staff-errors";
export { AddStaffInput, StaffEmail, StaffPassword, StaffRoleInput } from "./staff-input";
export { defaultThrottlePolicy } from "./throttle";
export type { ThrottlePolicy } from "./throttle";
export { clientAddress } from "./client-address";
export { AuthSecretError, resolveAuthSecret } from "./secret";
