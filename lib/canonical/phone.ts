import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";
import { InvalidDestinationError } from "./errors";

export type { CountryCode };

/**
 * A phone number in E.164 (+14155552671), parsed by libphonenumber-js: national formats are read
 * in the default country, punctuation and spaces are dropped, and "00"/"011" prefixes understood.
 * The default ("min") metadata checks length and leading digits, not every assigned range, so a
 * newly assigned range is not refused for being unknown.
 */
export function canonicalPhone(raw: string, defaultCountry: CountryCode): string {
  const parsed = parsePhoneNumberFromString(raw.trim(), { defaultCountry });
  if (!parsed?.isValid()) {
    throw new InvalidDestinationError("invalid_phone", `not a valid phone number: "${raw.trim().slice(0, 40)}"`);
  }
  return parsed.number;
}
