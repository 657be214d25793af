import path from "node:path";
import { z } from "zod";
import { parseMoneyInput } from "@/lib/limits/parse";
import { readUsageSourceEnv } from "@/lib/env";
import { hasControlCharacter } from "@/lib/http/strict-input";
import { isTimeZone } from "./days";
import { usageSourceKinds, type UsageSourceKind } from "./types";

// A usage source's settings as staff type them (the dashboard's form, the CLI), read into the
// row's values. Every field is text, trimmed; each problem names its field, all at once. What a
// source may hold depends on its kind: an API needs a credential reference and (Twilio) an
// account SID; a file source reads a URL or a local path and holds no credential.

/** The provider's own API base URL, used when an API source's location is left blank. */
export const defaultLocations: Record<Exclude<UsageSourceKind, "file" | "ses">, string> = {
  openai: "https://api.openai.com",
  anthropic: "https://api.anthropic.com",
  twilio: "https://api.twilio.com",
  sendgrid: "https://api.sendgrid.com",
  postmark: "https://api.postmarkapp.com",
};

export type ApiSourceKind = Exclude<UsageSourceKind, "file">;

/** An AWS region as SES names its endpoints: us-east-1, eu-west-2, ap-southeast-1. */
export const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The provider's own API base URL for a source of `kind`: SES's is its region's (the source's account). */
export function defaultLocationOf(kind: ApiSourceKind, account: string | null): string {
  if (kind !== "ses") return defaultLocations[kind];
  return `https://email.${account !== null && AWS_REGION.test(account) ? account : "us-east-1"}.amazonaws.com`;
}

/**
 * The secrets an API source may name, per kind: env:CEILINGS_SECRET_OPENAI or
 * env:CEILINGS_SECRET_OPENAI_..., and so on. Another feature's secret (the SMTP password) can
 * never be named by a usage source, and so never sent to a provider's host.
 */
export const credentialPrefixes: Record<ApiSourceKind, string> = {
  openai: "CEILINGS_SECRET_OPENAI",
  anthropic: "CEILINGS_SECRET_ANTHROPIC",
  twilio: "CEILINGS_SECRET_TWILIO",
  sendgrid: "CEILINGS_SECRET_SENDGRID",
  postmark: "CEILINGS_SECRET_POSTMARK",
  ses: "CEILINGS_SECRET_SES",
};

/** "an OpenAI source", for sentences about a kind. */
export const apiKindNames: Record<ApiSourceKind, string> = {
  openai: "an OpenAI",
  anthropic: "an Anthropic",
  twilio: "a Twilio",
  sendgrid: "a SendGrid",
  postmark: "a Postmark",
  ses: "an Amazon SES",
};

/** Whether `name` (the variable, without env:) is one an API source of `kind` may name. */
export function isCredentialNameOf(kind: ApiSourceKind, name: string): boolean {
  const prefix = credentialPrefixes[kind];
  return (name === prefix || name.startsWith(`${prefix}_`)) && /^[A-Z0-9_]+$/.test(name);
}

/** The hosts of USAGE_SOURCE_ALLOW_HOSTS, read at the moment of use (the form's save, the CLI). */
export function usageAllowHosts(): string[] {
  return readUsageSourceEnv().allowHosts;
}

/** The directory local file locations must be inside (USAGE_FILE_DIR), read at the moment of use; null when unset. */
export function usageFileDir(): string | null {
  return readUsageSourceEnv().fileDir;
}

/** The sentence saying local paths need USAGE_FILE_DIR. */
export const NO_FILE_DIR =
  "local paths are read only inside the directory named by USAGE_FILE_DIR, which is not set: set it in the worker's (and the dashboard's) environment, or use an https URL";

/**
 * Why an API source of `kind` may not send its credential to `location`, or null: the key goes only
 * to the provider's own host (api.openai.com, ...) or a host in USAGE_SOURCE_ALLOW_HOSTS (a
 * proxy, a test server), and never over plain http unless that host is allow-listed.
 */
export function credentialHostProblem(kind: ApiSourceKind, location: string, allowHosts: readonly string[], account: string | null = null): string | null {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return `location must be an http or https URL, got '${location.slice(0, 80)}'`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const listed = allowHosts.some((h) => h.toLowerCase() === host);
  const own = new URL(defaultLocationOf(kind, account)).hostname;
  if (!listed && host !== own) {
    return `the key of ${apiKindNames[kind]} source is sent only to ${own} or a host named in USAGE_SOURCE_ALLOW_HOSTS, not to ${host.slice(0, 80)}`;
  }
  if (url.protocol !== "https:" && !listed)
    return `the key is not sent over plain http: use https://${host.slice(0, 80)}, or name the host in USAGE_SOURCE_ALLOW_HOSTS`;
  return null;
}

/**
 * Why a local path may not be a file source's location, or null: it must be absolute and, with
 * `..` resolved, inside USAGE_FILE_DIR (symlinks are resolved when the file is read).
 */
export function localPathProblem(location: string, dir: string | null): string | null {
  if (dir === null) return NO_FILE_DIR;
  const root = path.resolve(dir);
  const target = path.resolve(location);
  if (target !== root && target.startsWith(root + path.sep)) return null;
  return `a local path must be inside USAGE_FILE_DIR (${root.slice(0, 120)}), got '${location.slice(0, 80)}'`;
}

export const MAX_SOURCE_NAME = 80;
const MAX_LOCATION = 500;
const TWILIO_SID = /^AC[0-9a-fA-F]{32}$/;
// OpenAI project ids (proj_...) and Anthropic workspace ids (wrkspc_...).
const FILTER_ID = /^[A-Za-z0-9_-]{1,200}$/;
const PERCENT = /^(\d{1,3})(?:\.(\d{1,2}))?$/;
const WHOLE = /^\d{1,4}$/;
/**
 * The most days back an SES source may ask for. GetSendStatistics returns the last two weeks, and
 * a day partly before them would be read short. 12 complete days start at most 13 days and an hour
 * before any pull (today and the 12 days before, one of them 25 hours long), inside the two weeks.
 */
export const SES_LOOKBACK_MAX = 12;
export const POSTMARK_ZONE = "America/New_York";
const POSTMARK_TAG = /^tag:\S(?:.{0,190}\S)?$/;
const PULL_AT = /^([01]\d|2[0-3]):[0-5]\d$/;

const text = (label: string, max: number) =>
  z
    .string({ error: `${label} is required` })
    .max(10_000)
    .trim()
    .refine((s) => !hasControlCharacter(s), `${label} must not contain control characters`)
    .refine((s) => s.length <= max, `${label} must be at most ${max} characters`);

/** Basis points from a percent typed with up to two decimals: "2" → 200, "0.5" → 50. */
export function percentToBasisPoints(raw: string): { ok: true; basisPoints: number } | { ok: false; error: string } {
  const m = PERCENT.exec(raw);
  if (!m) return { ok: false, error: `threshold percent must be a number from 0 to 100 with at most two decimals, got '${raw.slice(0, 40)}'` };
  const basisPoints = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
  if (basisPoints > 10_000) return { ok: false, error: `threshold percent must be at most 100, got '${raw}'` };
  return { ok: true, basisPoints };
}

/** Basis points as the percent a person would type back: 200 → "2", 250 → "2.5". */
export function basisPointsText(bp: number): string {
  const whole = Math.floor(bp / 100);
  const fraction = String(bp % 100)
    .padStart(2, "0")
    .replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** An http(s) URL with a host and no user or password in it (a credential is a reference, never part of a URL). */
function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `location must be an http or https URL, got '${raw.slice(0, 80)}'`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `location must be an http or https URL, got '${raw.slice(0, 80)}'`;
  if (url.username !== "" || url.password !== "")
    return "location must not carry a user or password: put the credential in an environment variable and name it in the credential reference";
  if (url.hostname === "") return `location must name a host, got '${raw.slice(0, 80)}'`;
  return null;
}

export const UsageSourceInput = z
  .object({
    name: text("name", MAX_SOURCE_NAME).pipe(z.string().min(1, "name is required")),
    kind: z.enum(usageSourceKinds, { error: `kind must be one of ${usageSourceKinds.join(", ")}` }),
    location: text("location", MAX_LOCATION).default(""),
    credentialRef: text("credential reference", 200).default(""),
    account: text("account", 200).default(""),
    timeZone: text("time zone", 64),
    currency: text("currency", 3).pipe(z.string().regex(/^[A-Z]{3}$/, "currency must be three capital letters, such as USD")),
    lookbackDays: text("lookback days", 10),
    thresholdPercent: text("threshold percent", 10),
    thresholdMoney: text("threshold money", 40),
    // Optional for the CLI and older callers: the defaults a new source gets.
    unmappedMoney: text("unmapped threshold", 40).default("1"),
    pullAt: text("pull time", 10).default("06:00"),
  })
  .superRefine((v, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (v.kind !== "file") {
      if (v.location !== "") {
        const problem = urlProblem(v.location) ?? credentialHostProblem(v.kind, v.location, usageAllowHosts(), v.account === "" ? null : v.account);
        if (problem) issue("location", problem);
      }
      const prefix = credentialPrefixes[v.kind];
      if (v.credentialRef === "")
        issue("credentialRef", `credential reference is required: env:${prefix}_... names the worker's environment variable holding the key`);
      else if (!v.credentialRef.startsWith("env:") || !isCredentialNameOf(v.kind, v.credentialRef.slice(4))) {
        issue(
          "credentialRef",
          `credential reference of a ${v.kind} source must be env:${prefix} or env:${prefix}_ followed by capital letters, digits or _ (each kind its own prefix), got '${v.credentialRef.slice(0, 80)}'`,
        );
      }
    } else {
      if (v.location !== "" && !v.location.startsWith("/")) {
        const problem = urlProblem(v.location);
        if (problem) issue("location", `location must be an http or https URL or an absolute path (/var/usage/postmark.csv), got '${v.location.slice(0, 80)}'`);
      } else if (v.location !== "") {
        const problem = localPathProblem(v.location, usageFileDir());
        if (problem) issue("location", problem);
      }
      if (v.credentialRef !== "") issue("credentialRef", "a file source takes no credential reference: leave it blank");
      if (v.account !== "") issue("account", "a file source takes no account: leave it blank");
    }
    if (v.kind === "twilio" && !TWILIO_SID.test(v.account)) {
      issue(
        "account",
        v.account === ""
          ? "account is required for Twilio: the Account SID, AC followed by 32 hex digits"
          : `account must be a Twilio Account SID (AC followed by 32 hex digits), got '${v.account.slice(0, 80)}'`,
      );
    }
    if (v.kind === "ses" && !AWS_REGION.test(v.account)) {
      issue(
        "account",
        v.account === ""
          ? "account is required for Amazon SES: the region its statistics are read in, such as us-east-1"
          : `account must be an AWS region such as us-east-1, got '${v.account.slice(0, 80)}'`,
      );
    }
    // SES keeps two weeks of sending statistics: an older day would read as a day without mail.
    if (v.kind === "ses" && WHOLE.test(v.lookbackDays) && Number(v.lookbackDays) > SES_LOOKBACK_MAX) {
      issue(
        "lookbackDays",
        `lookback days of an Amazon SES source must be at most ${SES_LOOKBACK_MAX}: SES keeps two weeks of sending statistics, got '${v.lookbackDays}'`,
      );
    }
    // Postmark counts US Eastern days (its statistics API says so); any other zone compares other intervals.
    if (v.kind === "postmark" && v.timeZone !== POSTMARK_ZONE)
      issue("timeZone", `Postmark's statistics count US Eastern days: set the time zone to ${POSTMARK_ZONE}, got '${v.timeZone.slice(0, 64)}'`);
    if (v.kind === "sendgrid" && v.timeZone !== "UTC" && isTimeZone(v.timeZone))
      issue("timeZone", `SendGrid's statistics count UTC days: set the time zone to UTC, got '${v.timeZone.slice(0, 64)}'`);
    if (v.kind === "sendgrid" && v.account !== "" && !FILTER_ID.test(v.account))
      issue("account", `account must be a subuser name (letters, digits, _ and -), got '${v.account.slice(0, 80)}'`);
    // Postmark counts a message stream, or the mail of one tag (tags are free text), or blank: every stream.
    if (v.kind === "postmark" && v.account !== "" && !FILTER_ID.test(v.account) && !POSTMARK_TAG.test(v.account)) {
      issue("account", `account must be a message stream id (letters, digits, _ and -) or tag: followed by a tag, got '${v.account.slice(0, 80)}'`);
    }
    if ((v.kind === "openai" || v.kind === "anthropic") && v.account !== "" && !FILTER_ID.test(v.account)) {
      issue("account", `account must be a ${v.kind === "openai" ? "project" : "workspace"} id (letters, digits, _ and -), got '${v.account.slice(0, 80)}'`);
    }
    if (!isTimeZone(v.timeZone)) issue("timeZone", `time zone must be an IANA name such as UTC or America/New_York, got '${v.timeZone.slice(0, 64)}'`);
    if (!WHOLE.test(v.lookbackDays) || Number(v.lookbackDays) < 1 || Number(v.lookbackDays) > 35) {
      issue("lookbackDays", `lookback days must be a whole number from 1 to 35, got '${v.lookbackDays}'`);
    }
    const percent = percentToBasisPoints(v.thresholdPercent);
    if (!percent.ok) issue("thresholdPercent", percent.error);
    const money = parseMoneyInput(v.thresholdMoney, "threshold money");
    if (!money.ok) issue("thresholdMoney", money.error);
    const unmapped = parseMoneyInput(v.unmappedMoney, "unmapped threshold");
    if (!unmapped.ok) issue("unmappedMoney", unmapped.error);
    if (!PULL_AT.test(v.pullAt))
      issue("pullAt", `pull time must be a time of day as HH:MM from 00:00 to 23:59, in the source's time zone, got '${v.pullAt.slice(0, 20)}'`);
  })
  .transform((v) => ({
    name: v.name,
    kind: v.kind,
    location:
      v.location === ""
        ? v.kind === "file"
          ? null
          : defaultLocationOf(v.kind, v.account === "" ? null : v.account)
        : v.location.replace(/\/+$/, "") || v.location,
    credentialRef: v.credentialRef === "" ? null : v.credentialRef,
    account: v.account === "" ? null : v.account,
    timeZone: v.timeZone,
    currency: v.currency,
    lookbackDays: Number(v.lookbackDays),
    thresholdBasisPoints: (() => {
      const p = percentToBasisPoints(v.thresholdPercent);
      return p.ok ? p.basisPoints : 0;
    })(),
    thresholdMicros: (() => {
      const m = parseMoneyInput(v.thresholdMoney, "threshold money");
      return m.ok ? m.micros : 0;
    })(),
    unmappedThresholdMicros: (() => {
      const m = parseMoneyInput(v.unmappedMoney, "unmapped threshold");
      return m.ok ? m.micros : 0;
    })(),
    // As Postgres' time prints it back, so an unchanged setting compares equal.
    pullAt: `${v.pullAt}:00`,
  }));

/** The settings as typed: every field text. */
export type UsageSourceInput = z.input<typeof UsageSourceInput>;
/** The settings as a usage_sources row holds them. */
export type UsageSourceSettings = z.output<typeof UsageSourceInput>;

/** A rule's match as typed: exact, or a prefix when it ends in `*` (a `*` elsewhere is refused). */
export const RuleMatch = text("match", 200)
  .pipe(z.string().min(1, "match is required: the provider's item (a model, a category, a file's item), or a prefix ending in *"))
  .refine((s) => !s.slice(0, -1).includes("*"), "match may end in * (a prefix); a * anywhere else is not a wildcard");
