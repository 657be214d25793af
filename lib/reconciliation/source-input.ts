import { z } from "zod";
import { parseMoneyInput } from "@/lib/budgets/money";
import { hasControlCharacter } from "@/lib/http/strict-input";
import { isTimeZone } from "./days";
import { usageSourceKinds, type UsageSourceKind } from "./types";

// A usage source's settings as staff type them (the dashboard's form, the CLI), read into the
// row's values. Every field is text, trimmed; each problem names its field, all at once. What a
// source may hold depends on its kind: an API needs a credential reference and (Twilio) an
// account SID; a file source reads a URL or a local path and holds no credential.

/** The provider's own API base URL, used when an API source's location is left blank. */
export const defaultLocations: Record<Exclude<UsageSourceKind, "file">, string> = {
  openai: "https://api.openai.com",
  anthropic: "https://api.anthropic.com",
  twilio: "https://api.twilio.com",
};

export const MAX_SOURCE_NAME = 80;
const MAX_LOCATION = 500;
const CREDENTIAL_REF = /^env:CEILINGS_SECRET_[A-Z0-9_]+$/;
const TWILIO_SID = /^AC[0-9a-fA-F]{32}$/;
// OpenAI project ids (proj_...) and Anthropic workspace ids (wrkspc_...).
const FILTER_ID = /^[A-Za-z0-9_-]{1,200}$/;
const PERCENT = /^(\d{1,3})(?:\.(\d{1,2}))?$/;
const WHOLE = /^\d{1,4}$/;

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
  const fraction = String(bp % 100).padStart(2, "0").replace(/0+$/, "");
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
  if (url.username !== "" || url.password !== "") return "location must not carry a user or password: put the credential in an environment variable and name it in the credential reference";
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
  })
  .superRefine((v, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    const api = v.kind !== "file";
    if (api) {
      if (v.location !== "") {
        const problem = urlProblem(v.location);
        if (problem) issue("location", problem);
      }
      if (v.credentialRef === "") issue("credentialRef", "credential reference is required: env:CEILINGS_SECRET_... names the worker's environment variable holding the key");
      else if (!CREDENTIAL_REF.test(v.credentialRef)) issue("credentialRef", `credential reference must be env:CEILINGS_SECRET_ followed by capital letters, digits or _, got '${v.credentialRef.slice(0, 80)}'`);
    } else {
      if (v.location !== "" && !v.location.startsWith("/")) {
        const problem = urlProblem(v.location);
        if (problem) issue("location", `location must be an http or https URL or an absolute path (/var/usage/postmark.csv), got '${v.location.slice(0, 80)}'`);
      }
      if (v.credentialRef !== "") issue("credentialRef", "a file source takes no credential reference: leave it blank");
      if (v.account !== "") issue("account", "a file source takes no account: leave it blank");
    }
    if (v.kind === "twilio" && !TWILIO_SID.test(v.account)) {
      issue("account", v.account === "" ? "account is required for Twilio: the Account SID, AC followed by 32 hex digits" : `account must be a Twilio Account SID (AC followed by 32 hex digits), got '${v.account.slice(0, 80)}'`);
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
  })
  .transform((v) => ({
    name: v.name,
    kind: v.kind,
    location: v.location === "" ? (v.kind === "file" ? null : defaultLocations[v.kind]) : v.location.replace(/\/+$/, "") || v.location,
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
  }));

/** The settings as typed: every field text. */
export type UsageSourceInput = z.input<typeof UsageSourceInput>;
/** The settings as a usage_sources row holds them. */
export type UsageSourceSettings = z.output<typeof UsageSourceInput>;

/** A rule's match as typed: exact, or a prefix when it ends in `*` (a `*` elsewhere is refused). */
export const RuleMatch = text("match", 200)
  .pipe(z.string().min(1, "match is required: the provider's item (a model, a category, a file's item), or a prefix ending in *"))
  .refine((s) => !s.slice(0, -1).includes("*"), "match may end in * (a prefix); a * anywhere else is not a wildcard");
