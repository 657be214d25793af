export { authenticateStaffToken, type TokenOwner } from "./authenticate";
export { createStaffToken, type CreatedStaffToken, StaffTokenName } from "./create";
export { StaffTokenError, type StaffTokenErrorCode } from "./errors";
export { listStaffTokens, type StaffTokenListed, type StaffTokenSummary } from "./list";
export { revokeStaffToken } from "./revoke";
export { generateStaffToken, STAFF_TOKEN_ENV, staffTokenPrefix } from "./token";
