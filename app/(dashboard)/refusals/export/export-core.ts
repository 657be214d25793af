import type { Db } from "@/db/client";
import { checkRole } from "@/app/_lib/guards";
import type { SessionStaff } from "@/app/_lib/session";
import { recordAudit } from "@/lib/audit/record";
import { apiError, statusOf } from "@/lib/http/responses";
import { isSameOriginRequest } from "@/lib/http/same-origin";
import { strictFormEntries } from "@/lib/http/strict-input";
import { filterParams, parseRefusalQuery, refusalCsvChunks, refusalCsvStream, type SearchParams } from "@/lib/refusals";
import { logError } from "@/lib/log/redact";

// The body of POST /refusals/export, with its dependencies passed in so tests run it on a real
// database as a chosen staff member. route.ts wires the live session and database.
export type ExportDeps = {
  session: () => Promise<SessionStaff | null>;
  db: () => Promise<Db>;
  now?: () => Date;
};

function fileStamp(now: Date): string {
  return now.toISOString().slice(0, 19).replaceAll(":", "").replace("T", "-");
}

/**
 * Streams the filtered refusal log as CSV. Any signed-in staff may export; callers and
 * destinations are masked for everyone but admins, decided here from the role in the database.
 * Every export is an audit event: who took which slice of the log, masked or not.
 */
export async function exportRefusalsCore(deps: ExportDeps, params: SearchParams): Promise<Response> {
  const auth = checkRole(await deps.session(), "viewer");
  if (!auth.ok) return apiError(statusOf(auth.code), auth.code, auth.error);
  const parsed = parseRefusalQuery(params);
  if (!parsed.ok) return invalidFilters(parsed.errors);
  const mask = auth.staff.role !== "admin";
  const db = await deps.db();
  const query = filterParams(parsed.filters).toString();
  await recordAudit(db, {
    actorType: "staff",
    actor: auth.staff.email,
    action: "refusals.export",
    target: query || "all refusals",
    details: { masked: mask, filters: Object.fromEntries(filterParams(parsed.filters)) },
  });
  const stream = refusalCsvStream(refusalCsvChunks(db, { filters: parsed.filters, mask }), (error) => logError("refusal export failed mid-stream", error));
  return new Response(stream, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="refusals-${fileStamp(deps.now?.() ?? new Date())}.csv"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

function invalidFilters(details: string[]): Response {
  return apiError(400, "invalid_input", `invalid filters: ${details.join("; ")}`, { details });
}

// Filters are a handful of short values; anything bigger is not our form.
const MAX_FORM_BYTES = 8 * 1024;

/**
 * POST /refusals/export from the refusal page's own form. The export writes an audit row, so it
 * is never a GET: a link, an <img> or a cross-site navigation exports nothing and writes nothing,
 * and a POST started by another origin is refused before anything is read.
 */
export async function exportRefusalsRequest(deps: ExportDeps, request: Request): Promise<Response> {
  if (request.method !== "POST") {
    return apiError(405, "method_not_allowed", "use the Export button: the export is a POST", {}, { allow: "POST" });
  }
  if (!isSameOriginRequest(request)) return apiError(403, "cross_origin", "cross-origin export refused");
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_FORM_BYTES) return apiError(413, "body_too_large", "the export form is too large");
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return apiError(400, "invalid_input", "the export takes a form body");
  }
  const read = strictFormEntries(form, 1000);
  if (!read.ok) return invalidFilters([read.rejection.message]);
  const params: SearchParams = {};
  for (const [k, v] of read.entries) if (!(k in params)) params[k] = v;
  return exportRefusalsCore(deps, params);
}
