// Canonical identities for cooldown keys: one key per real inbox or phone line.
export { canonicalDestination, type CanonicalDestination, type CanonicalOptions } from "./canonical";
export { canonicalEmail } from "./email";
export { type DestinationErrorCode, InvalidDestinationError } from "./errors";
export { canonicalPhone, type CountryCode } from "./phone";
export { DOMAIN_ALIASES, DOT_INSENSITIVE_DOMAINS, SUBADDRESS_SEPARATOR } from "./providers";
export { canonicalCaller, hasControlChars, hasLoneSurrogate, replaceControlChars } from "./caller";
