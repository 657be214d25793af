import { z } from "zod";
import { KeysetCursor } from "@/lib/keyset";
import { blankToUndefined, firstValues, type SearchParams } from "@/lib/search-params";
import { ENDPOINT_KEY_PATTERN, GATES } from "@/lib/vocabulary";

// The refusal log's state lives in the URL (shareable links; alerts link here with
// ?endpoint=&from=&to=). This file turns search params into typed filters and back.

const DATE_ONLY = /^\d{4}-\d\d-\d\d$/;
// What <input type="datetime-local"> sends: no zone. The dashboard shows UTC, so it is read as UTC.
const LOCAL_DATETIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?$/;

/** An instant from a URL: ISO 8601 with an offset, a zone-less date-time (UTC) or a date (UTC midnight). */
export const Instant = z
  .string()
  .trim()
  .transform((s, ctx) => {
    let text = s;
    if (DATE_ONLY.test(s)) text = `${s}T00:00:00Z`;
    else if (LOCAL_DATETIME.test(s)) text = `${s}Z`;
    else if (!z.iso.datetime({ offset: true }).safeParse(s).success) {
      ctx.addIssue({ code: "custom", message: `must be a date or an ISO 8601 time, got '${s.slice(0, 40)}'` });
      return z.NEVER;
    }
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: "custom", message: `is not a real date: '${s.slice(0, 40)}'` });
      return z.NEVER;
    }
    return date;
  });

const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());

export const RefusalFilters = z
  .object({
    endpoint: optional(z.string().trim().regex(ENDPOINT_KEY_PATTERN, "endpoint must be an endpoint key such as email.subscribe")),
    gate: optional(z.enum(GATES, { error: `gate must be one of ${GATES.join(", ")}` })),
    caller: optional(z.string().trim().max(200, "caller is at most 200 characters")),
    destination: optional(z.string().trim().max(320, "destination is at most 320 characters")),
    from: optional(Instant),
    to: optional(Instant),
  })
  .refine((f) => !f.from || !f.to || f.from.getTime() < f.to.getTime(), { message: "from must be before to", path: ["from"] });
export type RefusalFilters = z.output<typeof RefusalFilters>;

/** Keyset position: rows older than `before`, or newer than `after`. */
export const RefusalPosition = z.object({
  before: optional(KeysetCursor),
  after: optional(KeysetCursor),
});
export type RefusalPosition = z.output<typeof RefusalPosition>;

export type { SearchParams } from "@/lib/search-params";

export type ParsedRefusalQuery = { ok: true; filters: RefusalFilters; position: RefusalPosition } | { ok: false; errors: string[] };

/** Parses URL search params; errors name the parameter so the page can say what to fix. */
export function parseRefusalQuery(params: SearchParams): ParsedRefusalQuery {
  const raw = firstValues(params);
  const filters = RefusalFilters.safeParse(raw);
  const position = RefusalPosition.safeParse(raw);
  if (filters.success && position.success) return { ok: true, filters: filters.data, position: position.data };
  const issues = [...(filters.error?.issues ?? []), ...(position.error?.issues ?? [])];
  return { ok: false, errors: issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`) };
}

/** Filters back to search params, for links that keep them (pages, export, chart). */
export function filterParams(f: RefusalFilters): URLSearchParams {
  const p = new URLSearchParams();
  if (f.endpoint) p.set("endpoint", f.endpoint);
  if (f.gate) p.set("gate", f.gate);
  if (f.caller) p.set("caller", f.caller);
  if (f.destination) p.set("destination", f.destination);
  if (f.from) p.set("from", f.from.toISOString());
  if (f.to) p.set("to", f.to.toISOString());
  return p;
}

export function hasFilters(f: RefusalFilters): boolean {
  return filterParams(f).size > 0;
}
