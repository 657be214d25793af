import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resolveCredential } from "../pull";
import { UsageSourceInput, type UsageSourceInput as Typed } from "../source-input";

// What an admin may save for an email source (the form and the CLI read it through the same
// UsageSourceInput): each kind's own secret prefix, the provider's own host, the zone its days are
// counted in, what its account means, and SES's two weeks.

const base: Typed = {
  name: "mail",
  kind: "sendgrid",
  location: "",
  credentialRef: "env:CEILINGS_SECRET_SENDGRID",
  account: "",
  timeZone: "UTC",
  currency: "USD",
  lookbackDays: "3",
  thresholdPercent: "2",
  thresholdMoney: "1",
};
const ses: Typed = { ...base, kind: "ses", credentialRef: "env:CEILINGS_SECRET_SES_PROD", account: "eu-west-1", timeZone: "Europe/Paris" };
const postmark: Typed = { ...base, kind: "postmark", credentialRef: "env:CEILINGS_SECRET_POSTMARK", timeZone: "America/New_York" };

/** The problems of a form, field by field; {} when it saves. */
function problems(input: Typed): Record<string, string> {
  const parsed = UsageSourceInput.safeParse(input);
  return parsed.success ? {} : Object.fromEntries(parsed.error.issues.map((i) => [String(i.path[0]), i.message]));
}

describe("an email source's settings", () => {
  beforeEach(() => {
    vi.stubEnv("USAGE_SOURCE_ALLOW_HOSTS", undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("a blank location is the provider's own API (SES's of the account's region)", () => {
    expect(UsageSourceInput.parse(base).location).toBe("https://api.sendgrid.com");
    expect(UsageSourceInput.parse(postmark).location).toBe("https://api.postmarkapp.com");
    expect(UsageSourceInput.parse(ses).location).toBe("https://email.eu-west-1.amazonaws.com");
  });

  it("each names a secret of its own prefix only", () => {
    expect(problems({ ...base, credentialRef: "env:CEILINGS_SECRET_OPENAI" }).credentialRef).toMatch(
      /env:CEILINGS_SECRET_SENDGRID or env:CEILINGS_SECRET_SENDGRID_/,
    );
    expect(problems({ ...postmark, credentialRef: "env:SMTP_PASSWORD" }).credentialRef).toMatch(/CEILINGS_SECRET_POSTMARK/);
    expect(problems({ ...ses, credentialRef: "env:CEILINGS_SECRET_SESX" }).credentialRef).toMatch(/CEILINGS_SECRET_SES/);
    const lookup = (name: string) => (name === "CEILINGS_SECRET_SES_PROD" ? "AKIAEXAMPLE000000000:secret" : name === "SMTP_PASSWORD" ? "smtp" : undefined);
    expect(resolveCredential({ name: "mail", kind: "ses", credentialRef: "env:CEILINGS_SECRET_SES_PROD" }, lookup)).toBe("AKIAEXAMPLE000000000:secret");
    expect(() => resolveCredential({ name: "mail", kind: "postmark", credentialRef: "env:SMTP_PASSWORD" }, lookup)).toThrow(/env:CEILINGS_SECRET_POSTMARK/);
  });

  it("the key goes only to the provider's host (SES: the account's region's), or one USAGE_SOURCE_ALLOW_HOSTS names", () => {
    expect(problems({ ...base, location: "https://sendgrid.example.com" }).location).toMatch(
      /sent only to api\.sendgrid\.com .* not to sendgrid\.example\.com/,
    );
    expect(problems({ ...postmark, location: "http://api.postmarkapp.com" }).location).toMatch(/plain http/);
    expect(problems({ ...ses, location: "https://email.us-east-1.amazonaws.com" }).location).toMatch(/sent only to email\.eu-west-1\.amazonaws\.com/);
    expect(problems({ ...ses, location: "https://email.eu-west-1.amazonaws.com" })).toEqual({});
    vi.stubEnv("USAGE_SOURCE_ALLOW_HOSTS", "mail-proxy.internal");
    expect(problems({ ...base, location: "http://mail-proxy.internal:8080" })).toEqual({});
  });

  it("each counts its provider's days: SendGrid UTC, Postmark New York, SES any zone", () => {
    expect(problems({ ...base, timeZone: "America/New_York" }).timeZone).toMatch(/SendGrid's statistics count UTC days/);
    expect(problems({ ...postmark, timeZone: "UTC" }).timeZone).toMatch(/Postmark's statistics count US Eastern days: set the time zone to America\/New_York/);
    expect(problems({ ...postmark, timeZone: "EST" }).timeZone).toMatch(/America\/New_York/);
    expect(problems({ ...ses, timeZone: "Asia/Kolkata" })).toEqual({});
  });

  it("the account: a SendGrid subuser, a Postmark stream or tag:, an SES region (required)", () => {
    expect(problems({ ...base, account: "marketing-eu" })).toEqual({});
    expect(problems({ ...base, account: "two words" }).account).toMatch(/subuser name/);
    expect(problems({ ...postmark, account: "broadcast" })).toEqual({});
    expect(problems({ ...postmark, account: "tag:password reset" })).toEqual({});
    expect(problems({ ...postmark, account: "tag:" }).account).toMatch(/message stream id .* or tag: followed by a tag/);
    expect(problems({ ...postmark, account: "a stream" }).account).toMatch(/message stream id/);
    expect(problems({ ...ses, account: "" }).account).toMatch(/account is required for Amazon SES/);
    expect(problems({ ...ses, account: "Europe" }).account).toMatch(/AWS region such as us-east-1/);
  });

  it("SES looks back at most 12 days: each one wholly inside the two weeks it keeps", () => {
    expect(problems({ ...ses, lookbackDays: "12" })).toEqual({});
    expect(problems({ ...ses, lookbackDays: "13" }).lookbackDays).toMatch(/at most 12: SES keeps two weeks/);
    expect(problems({ ...postmark, lookbackDays: "35" })).toEqual({});
  });
});
