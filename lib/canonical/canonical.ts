import { canonicalEmail } from "./email";
import { InvalidDestinationError } from "./errors";
import { type CountryCode, canonicalPhone } from "./phone";
import type { DestinationKind } from "@/lib/vocabulary";

export type CanonicalDestination = {
  kind: DestinationKind;
  /** The identity the cooldown counts: every alias of one inbox or one line maps to it. */
  key: string;
  /** What the caller gave, trimmed: deliver to this, never to the key. */
  original: string;
};

export type CanonicalOptions = {
  /** Country used to read numbers written without "+" and a country code. */
  defaultCountry?: CountryCode;
};

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
// Digits with the punctuation people type in phone numbers, an optional extension (dropped from the
// key: every extension rings the same line), and at least a few digits.
const PHONE_LIKE = /^\+?[\d\s().\-/]+(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?$/i;

/**
 * Folds a destination to the identity its cooldown is keyed on. Email addresses and phone numbers
 * are recognised and canonicalised; anything else (a webhook URL, a device id) is trimmed and
 * lowercased, the same fold the SQL function applies for callers in other languages.
 * Throws InvalidDestinationError for an address or a number that cannot be one.
 */
export function canonicalDestination(raw: string, options: CanonicalOptions = {}): CanonicalDestination {
  const original = raw.trim();
  if (original.length === 0) throw new InvalidDestinationError("empty", "destination is empty");
  if (!URL_LIKE.test(original) && original.includes("@")) {
    return { kind: "email", key: canonicalEmail(original), original };
  }
  if (PHONE_LIKE.test(original) && (original.match(/\d/g)?.length ?? 0) >= 3) {
    return { kind: "phone", key: canonicalPhone(original, options.defaultCountry ?? "US"), original };
  }
  return { kind: "other", key: original.toLowerCase(), original };
}
