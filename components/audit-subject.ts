import type { AuditEvent } from "@/db/schema";

// What an audit event is about, for the log's Subject column. The row keeps an endpoint in its own
// columns (endpoint_key, ceiling_id) and anything else in `target`: a caller an override is for, an
// API key's name, a staff member's e-mail address, an alert, a destination, a refused form field,
// the filters of an export. The kind says which, so an e-mail address is never read as an endpoint.

export type AuditSubjectKind = "endpoint" | "API key" | "staff" | "alert" | "alert destination" | "refusal log" | "form field" | "account";

export type AuditSubject = { kind: AuditSubjectKind | string; name: string };

type Row = Pick<AuditEvent, "action" | "endpointKey" | "ceilingId" | "target" | "details">;

/** The subject of an event, or null for one about nothing in particular (the demo's seed). */
export function auditSubject(e: Row): AuditSubject | null {
  const family = e.action.split(".")[0] ?? "";
  if (e.endpointKey !== null) {
    const parts = [e.endpointKey];
    if (e.ceilingId !== null) parts.push(`ceiling #${e.ceilingId}`);
    if (e.target) parts.push(family === "override" ? `caller ${e.target}` : e.target);
    return { kind: "endpoint", name: parts.join(" · ") };
  }
  const target = e.target ?? "";
  // account.rejected names the account a refused assignment was for (or nothing, for a bulk body).
  if (e.action.endsWith(".rejected") && family !== "account") return target ? { kind: "form field", name: target } : null;
  if (target === "") return null;
  switch (family) {
    case "api_key":
      return { kind: "API key", name: target };
    case "staff":
      return { kind: "staff", name: target };
    case "alert":
      return { kind: "alert", name: target.replace(/^alert:/, "#") };
    case "alert_destination": {
      const name = e.details?.name;
      return { kind: "alert destination", name: typeof name === "string" && name !== "" ? name : target.replace(/^alert_destination:/, "#") };
    }
    case "refusals":
      return { kind: "refusal log", name: target };
    case "account":
      return { kind: "account", name: target };
    default:
      return { kind: family.replaceAll("_", " "), name: target };
  }
}
