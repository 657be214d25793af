import { describe, expect, it } from "vitest";
import { canonicalDestination, type CountryCode, InvalidDestinationError } from "./index";

// [raw, expected key]: every row is one alias a person could type for the same inbox.
const EMAIL_ROWS: ReadonlyArray<readonly [string, string]> = [
  ["jane@example.com", "jane@example.com"],
  ["Jane@Example.COM", "jane@example.com"],
  ["  jane@example.com\t", "jane@example.com"],
  ["\njane@example.com ", "jane@example.com"],
  ["jane+news@example.com", "jane@example.com"],
  ["jane+a+b@example.com", "jane@example.com"],
  ["jane.doe@example.com", "jane.doe@example.com"],
  ["j.a.n.e@gmail.com", "jane@gmail.com"],
  ["J.Ane+Promo@GMail.com", "jane@gmail.com"],
  ["jane@googlemail.com", "jane@gmail.com"],
  ["j.ane+x@GoogleMail.com", "jane@gmail.com"],
  ["jane@example.com.", "jane@example.com"],
  ["+jane@example.com", "+jane@example.com"],
  ["Ünïcode@example.com", "ünïcode@example.com"],
  // The same letter typed precomposed (NFC) and as e + combining accent (NFD).
  ["caf\u00e9@example.com", "caf\u00e9@example.com"],
  ["cafe\u0301@example.com", "caf\u00e9@example.com"],
  ["jane@Bücher.DE", "jane@xn--bcher-kva.de"],
  ["jane@xn--bcher-kva.de", "jane@xn--bcher-kva.de"],
  ["o'brien+tag@sub.example.co.uk", "o'brien@sub.example.co.uk"],
];

const INVALID_EMAILS: readonly string[] = [
  "jane@",
  "@example.com",
  "jane@localhost",
  "jane@@example.com",
  "ja ne@example.com",
  "jane@exa mple.com",
  "jane@-example.com",
  "...@gmail.com",
];

// [raw, default country, expected E.164]
const PHONE_ROWS: ReadonlyArray<readonly [string, CountryCode, string]> = [
  ["(415) 555-2671", "US", "+14155552671"],
  ["415.555.2671", "US", "+14155552671"],
  ["415 555 2671", "US", "+14155552671"],
  ["1-415-555-2671", "US", "+14155552671"],
  ["+1 415 555 2671", "GB", "+14155552671"],
  ["011 44 20 7946 0958", "US", "+442079460958"],
  ["+44 20 7946 0958", "US", "+442079460958"],
  ["+44 (0)20 7946 0958", "US", "+442079460958"],
  ["020 7946 0958", "GB", "+442079460958"],
  ["0044 20 7946 0958", "GB", "+442079460958"],
  ["07911 123456", "GB", "+447911123456"],
  ["06 12 34 56 78", "FR", "+33612345678"],
  ["+33 6 12-34-56-78", "US", "+33612345678"],
  ["415 555 2671 ext 3", "US", "+14155552671"],
];

const INVALID_PHONES: ReadonlyArray<readonly [string, CountryCode]> = [
  ["123", "US"],
  ["555-0100", "US"],
  ["+1 202 555 01", "US"],
  ["+999 1234567", "US"],
  ["020 7946 0958", "US"],
  ["+44 20 7946 0958 0958 0958", "US"],
];

describe("canonicalDestination: email", () => {
  it.each(EMAIL_ROWS)("%j folds to %j", (raw, key) => {
    const c = canonicalDestination(raw);
    expect(c).toEqual({ kind: "email", key, original: raw.trim() });
  });

  it("keeps the original for delivery while the key folds", () => {
    expect(canonicalDestination(" J.Ane+Promo@GoogleMail.com ").original).toBe("J.Ane+Promo@GoogleMail.com");
  });

  it.each(INVALID_EMAILS)("%j is an invalid_email error", (raw) => {
    expect(() => canonicalDestination(raw)).toThrow(InvalidDestinationError);
    try {
      canonicalDestination(raw);
    } catch (error) {
      expect(error instanceof InvalidDestinationError && error.code).toBe("invalid_email");
    }
  });
});

describe("canonicalDestination: phone", () => {
  it.each(PHONE_ROWS)("%j in %s is %s", (raw, defaultCountry, key) => {
    expect(canonicalDestination(raw, { defaultCountry })).toEqual({ kind: "phone", key, original: raw.trim() });
  });

  it("reads national numbers in the US when no country is given", () => {
    expect(canonicalDestination("(415) 555-2671").key).toBe("+14155552671");
  });

  it.each(INVALID_PHONES)("%j in %s is an invalid_phone error", (raw, defaultCountry) => {
    let caught: unknown;
    try {
      canonicalDestination(raw, { defaultCountry });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidDestinationError);
    expect(caught instanceof InvalidDestinationError && caught.code).toBe("invalid_phone");
  });
});

describe("canonicalDestination: other destinations", () => {
  it.each([
    ["https://hooks.example.com/T0/B0?user=a@b", "https://hooks.example.com/t0/b0?user=a@b"],
    ["Device-ABC", "device-abc"],
    ["  Channel #7 ", "channel #7"],
  ])("%j is trimmed and lowercased like the SQL fallback", (raw, key) => {
    expect(canonicalDestination(raw)).toEqual({ kind: "other", key, original: raw.trim() });
  });

  it("refuses an empty destination", () => {
    expect(() => canonicalDestination("   ")).toThrow(/empty/);
  });
});
