// What each mail provider folds into one inbox. Folding rules are provider-specific and never
// complete: an alias scheme missing here gets one message per alias, which the global ceiling
// behind the cooldown still bounds.

/** Domains that deliver to another domain's inboxes: the key uses the target. */
export const DOMAIN_ALIASES: Readonly<Record<string, string>> = {
  "googlemail.com": "gmail.com",
};

/** Domains whose local part ignores dots (after aliasing): "j.doe" and "jdoe" are one inbox. */
export const DOT_INSENSITIVE_DOMAINS: ReadonlySet<string> = new Set(["gmail.com"]);

/** Sub-address separator: everything from it to the "@" is a tag the provider ignores. */
export const SUBADDRESS_SEPARATOR = "+";
