import { getDb } from "@/db/client";
import { probeDatabase } from "@/lib/database-status";
import { apiError, apiJson } from "@/lib/http/responses";
import { logError } from "@/lib/log/redact";

export const dynamic = "force-dynamic";

/** Liveness plus one round trip to the database. No auth: load balancers and Playwright poll it. */
export async function GET(): Promise<Response> {
  try {
    // The dashboard's own probe: bounded, so a failing-over cluster answers 503 instead of hanging.
    const status = await probeDatabase(await getDb());
    if (status.ok) return apiJson(200, { status: "ok" });
    logError(`health check: database query failed: ${status.message}`);
  } catch (error) {
    logError("health check: database unreachable", error);
  }
  return apiError(503, "unavailable", "database unreachable", { status: "unavailable" });
}
