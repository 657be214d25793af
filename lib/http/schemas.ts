import { z } from "zod";
import { canonicalCaller, hasControlChars } from "@/lib/canonical/caller";
import { refuseUnnamedParts } from "@/lib/vocabulary";

// The bodies of the HTTP API. Unknown fields are rejected, not ignored: a misspelt
// `idempotency_key` silently dropped would turn a safe retry into a second charge.

function show(raw: unknown): string {
  if (raw === undefined) return "nothing";
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** A JSON number that is a safe whole number of at least `min`. Strings such as "1e9" are refused. */
function wholeNumber(field: string, min: 0 | 1) {
  const wanted = min === 1 ? "a positive whole number" : "a whole number, zero or more,";
  return z
    .unknown()
    .transform((raw, ctx) => {
      if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= min) return raw;
      const message =
        raw === undefined ? `${field} is required` : `${field} must be ${wanted} (a JSON number up to ${Number.MAX_SAFE_INTEGER}), got ${show(raw)}`;
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    })
    .meta({ type: "integer", minimum: min, maximum: Number.MAX_SAFE_INTEGER }); // what the OpenAPI document says it accepts
}

// What the OpenAPI document says each text accepts, as JSON Schema patterns. They are the
// boundary's rules written once more, for clients: the conformance fuzzer
// (app/api/v1/_lib/openapi-fuzz.int.test.ts) holds the server to them. The characters are
// written as themselves, never as a \uXXXX escape (which PCRE, Perl and RE2 refuse) nor as \s
// (whose meaning varies): ECMAScript, PCRE, Perl and RE2 read them alike (patterns.test.ts compiles
// them with RE2 and Perl). In the JSON document a control character is a JSON escape, which every
// JSON parser decodes before a regex sees it. A control character is C0 or C1 (U+0000-U+001F,
// U+007F-U+009F); whitespace is what JavaScript's trim() removes. A lone surrogate is no character
// and cannot be written in a portable pattern: the body's reader refuses one before any schema
// (400 invalid_characters).
const CONTROL = "\u0000-\u001f\u007f-\u009f";
const SPACE = " \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";
/** Neither a control character nor whitespace. */
const SOLID = `[^${CONTROL}${SPACE}]`;
/** Not a control character. */
const TEXT = `[^${CONTROL}]`;
/** Whole text with something solid in it and no control character anywhere: taken as sent. */
export const AS_SENT_PATTERN = `^${TEXT}*${SOLID}${TEXT}*$`;
/** Trimmed first (whitespace and \t, \n, \r at either end), then as above with no control character. */
const TRIMMED_EDGE = `[\t\n\r${SPACE}]*`;
export const TRIMMED_PATTERN = `^${TRIMMED_EDGE}${SOLID}(?:${TEXT}*${SOLID})?${TRIMMED_EDGE}$`;
/** The caller is trimmed like a caller everywhere (canonicalCaller), which also drops \v, \f and U+0085 at its ends. */
const CALLER_EDGE = `[\t\n\v\f\r\u0085${SPACE}]*`;
export const CALLER_PATTERN = `^${CALLER_EDGE}${SOLID}(?:${TEXT}*${SOLID})?${CALLER_EDGE}$`;
/** A billing account named in a query (ApiKeyAccount): trimmed, then no whitespace or control character at all. */
export const ACCOUNT_PATTERN = `^${TRIMMED_EDGE}${SOLID}+${TRIMMED_EDGE}$`;
/** A header value kept as sent: no control character. */
export const NO_CONTROL_PATTERN = `^${TEXT}*$`;

/**
 * An optional string: null reads as absent, blank (only whitespace) is an error, and so is a
 * control character (a NUL would have failed the database call of every request batched with
 * this one). Only the caller is trimmed (canonicalCaller), as the library and SQL trim it; the
 * other fields are taken as sent, as there, so one idempotency key is one key on every path.
 */
function optionalText(field: string, max: number, trim: boolean) {
  const description = trim
    ? `trimmed of whitespace at both ends, then at least 1 and at most ${max} characters, none of them a control character`
    : `taken as sent: at most ${max} characters, not only whitespace, no control character`;
  return z
    .string({ error: `${field} must be a string` })
    .meta({ minLength: 1, maxLength: max, pattern: trim ? CALLER_PATTERN : AS_SENT_PATTERN, description })
    .transform(trim ? canonicalCaller : (v: string) => v)
    .pipe(
      z
        .string()
        .refine((v) => canonicalCaller(v) !== "", `${field} must not be blank`)
        .max(max, `${field} must be at most ${max} characters`)
        .refine((v) => !hasControlChars(v), `${field} must not contain control characters`),
    )
    .nullish()
    .transform((v) => v ?? undefined);
}

export const EndpointKeyParam = z
  .string({ error: "endpoint is required" })
  .trim()
  .min(1, "endpoint is required")
  .max(64, "endpoint must be at most 64 characters")
  .refine((v) => !hasControlChars(v), "endpoint must not contain control characters")
  .meta({ pattern: TRIMMED_PATTERN, description: "an endpoint key, trimmed of whitespace at both ends" });

/** A part's name, as the catalog spells them: input, output, cached-input. */
const PART_NAME = "^[a-z][a-z0-9_-]{0,31}$";

/**
 * Units per priced part: an object naming every part of the endpoint, each a whole number, zero
 * or more. The names are checked against the endpoint by the database (invalid_parts).
 */
function partsObject(field: string) {
  return z
    .preprocess(
      refuseUnnamedParts((name) => `${field}.${name}: a part's name is lower case, like input or output`),
      z
        .record(
          z.string().regex(new RegExp(PART_NAME), `${field}: a part's name is lower case, like input or output`),
          z
            .unknown()
            .transform((raw, ctx) => {
              if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0) return raw;
              ctx.addIssue({
                code: "custom",
                message: `each of ${field} must be a whole number, zero or more (a JSON number up to ${Number.MAX_SAFE_INTEGER}), got ${show(raw)}`,
              });
              return z.NEVER;
            })
            .meta({ type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
          { error: `${field} must be an object of units per part, e.g. {"input": 1200, "output": 800}` },
        )
        .refine((p) => Object.keys(p).length <= 8, `${field} names at most 8 parts`)
        .meta({ propertyNames: { pattern: PART_NAME }, maxProperties: 8 }),
    )
    .optional();
}

export const ReserveBody = z
  .strictObject({
    endpoint: EndpointKeyParam,
    amount: wholeNumber("amount", 1)
      .optional()
      .meta({ description: "the units of the call; an endpoint priced part by part takes parts instead (or both, equal)" }),
    parts: partsObject("parts").meta({
      description: "units per priced part of the endpoint (its worst case: the prompt's input tokens, max_tokens of output); every part named",
    }),
    caller: optionalText("caller", 200, true),
    destination: optionalText("destination", 320, false),
    idempotencyKey: optionalText("idempotencyKey", 200, false),
    ttlSeconds: z
      .number({ error: "ttlSeconds must be a number" })
      .int("ttlSeconds must be a whole number")
      .min(1, "ttlSeconds must be at least 1")
      .max(86_400, "ttlSeconds must be at most 86400 (one day)")
      .nullish()
      .transform((v) => v ?? undefined),
  })
  // The document says "amount or parts" as two whole objects (openapi.ts, EITHER).
  .refine((b) => b.amount !== undefined || b.parts !== undefined, {
    path: ["amount"],
    message: "amount is required (or parts, for an endpoint priced part by part)",
  });
export type ReserveBody = z.infer<typeof ReserveBody>;

export const SettleBody = z
  .strictObject({
    actual: wholeNumber("actual", 0).optional().meta({ description: "the units used; an endpoint priced part by part is settled with parts" }),
    parts: partsObject("parts").meta({ description: "the units each priced part used; every part named" }),
  })
  .refine((b) => b.actual !== undefined || b.parts !== undefined, {
    path: ["actual"],
    message: "actual is required (or parts, for an endpoint priced part by part)",
  });
export const ReleaseBody = z.strictObject({});

export const ReservationIdParam = z.uuid("the reservation id must be a UUID");

/**
 * X-Request-Id, stored on the reservation for tracing: up to 100 characters, no control character.
 * A longer one is refused rather than cut: a cut id no longer matches the caller's own logs, and
 * two ids that share their first 100 characters would become one. Empty reads as absent.
 */
export const MAX_REQUEST_ID = 100;
export const RequestIdHeader = z
  .string()
  .max(MAX_REQUEST_ID, `X-Request-Id must be at most ${MAX_REQUEST_ID} characters`)
  .refine((v) => !hasControlChars(v), "X-Request-Id must not contain control characters")
  .meta({ pattern: NO_CONTROL_PATTERN });

export type BodyIssue = { code: string; message: string };

// parts of the wrong shape are invalid_input; invalid_parts is the database's: parts that are not
// the endpoint's, which no schema can know.
const FIELD_CODES: Record<string, string> = { amount: "invalid_amount", actual: "invalid_amount", ttlSeconds: "invalid_ttl" };

/** The first problem of a body, with a machine-readable code. */
export function describeIssue(error: z.ZodError): BodyIssue {
  const issue = error.issues[0];
  if (!issue) return { code: "invalid_input", message: "the request body is invalid" };
  if (issue.code === "unrecognized_keys") {
    return { code: "unknown_field", message: `unknown field(s): ${issue.keys.join(", ")}` };
  }
  if (issue.code === "invalid_type" && issue.path.length === 0) {
    return { code: "invalid_input", message: "the request body must be a JSON object" };
  }
  const field = String(issue.path[0] ?? "");
  return { code: FIELD_CODES[field] ?? "invalid_input", message: issue.message };
}

// ---- accounts: plans assigned by a trusted key (the billing service) ----------------------------

/** A plan's key as sent: whitespace at either end is dropped, then a plan key's shape. */
export const PLAN_KEY_PATTERN = `^${TRIMMED_EDGE}[a-z0-9][a-z0-9._-]{0,63}${TRIMMED_EDGE}$`;

/**
 * The most a bulk assignment body may weigh: 10,000 rows of a 200-character account and a
 * 64-character plan key written plainly are about 3 MB; accounts written as \u escapes may need
 * more, and are then sent in smaller bodies. Every other body of the API stays at 16 KiB.
 */
export const MAX_BULK_BODY_BYTES = 4 * 1024 * 1024;

const ACCOUNT_DOC = {
  minLength: 1,
  maxLength: 200,
  pattern: TRIMMED_PATTERN,
  description:
    "a billing account, as a per-caller ceiling counts it: trimmed of whitespace at both ends, then 1 to 200 characters, none of them a control character",
};
/** A bulk row's account: trimmed as a reservation's caller is (\v, \f and U+0085 at an edge too); a path refuses those at the edge (proxy.ts). */
const ROW_ACCOUNT_DOC = { ...ACCOUNT_DOC, pattern: CALLER_PATTERN };
const PLAN_DOC = { pattern: PLAN_KEY_PATTERN, description: "a plan's key (free, pro, ...); whitespace at either end is dropped" };

/** The account in the path; its rules are checked by lib/accounts (parseAccountId), which this documents. */
export const AccountParam = z.string().meta(ACCOUNT_DOC);

/** PUT /api/v1/accounts/{account}. The plan's shape and existence are checked by lib/accounts. */
export const AssignPlanBody = z.strictObject({
  plan: z.string({ error: "plan must be a string: the key of a plan" }).meta(PLAN_DOC),
});

export const AssignmentRowBody = z.strictObject({
  account: z.string({ error: "account must be a string" }).meta(ROW_ACCOUNT_DOC),
  plan: z.string({ error: "plan must be a string: the key of a plan" }).meta(PLAN_DOC),
});

/** POST /api/v1/accounts:bulk: up to 10,000 rows, all assigned or none. */
export const BulkAssignBody = z.strictObject({
  accounts: z
    .array(AssignmentRowBody, { error: "accounts must be an array of {account, plan}" })
    .meta({ minItems: 1, maxItems: 10_000, description: "one row per account (an account twice is refused); at most 10,000 rows" }),
});
