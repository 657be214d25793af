import { z } from "zod";
import { canonicalCaller, hasControlChars } from "@/lib/canonical/caller";

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
  return z.unknown().transform((raw, ctx) => {
    if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= min) return raw;
    const message =
      raw === undefined
        ? `${field} is required`
        : `${field} must be ${wanted} (a JSON number up to ${Number.MAX_SAFE_INTEGER}), got ${show(raw)}`;
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  }).meta({ type: "integer", minimum: min, maximum: Number.MAX_SAFE_INTEGER }); // what the OpenAPI document says it accepts
}

/**
 * An optional string: null reads as absent, blank (only whitespace) is an error, and so is a
 * control character (a NUL would have failed the database call of every request batched with
 * this one). Only the caller is trimmed (canonicalCaller), as the library and SQL trim it; the
 * other fields are taken as sent, as there, so one idempotency key is one key on every path.
 */
function optionalText(field: string, max: number, trim: boolean) {
  return z
    .string({ error: `${field} must be a string` })
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
  .refine((v) => !hasControlChars(v), "endpoint must not contain control characters");

export const ReserveBody = z.strictObject({
  endpoint: EndpointKeyParam,
  amount: wholeNumber("amount", 1),
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
});
export type ReserveBody = z.infer<typeof ReserveBody>;

export const SettleBody = z.strictObject({ actual: wholeNumber("actual", 0) });
export const ReleaseBody = z.strictObject({});

export const ReservationIdParam = z.uuid("the reservation id must be a UUID");

export type BodyIssue = { code: string; message: string };

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
