import { probeDatabase } from "@/lib/database-status";
import { type ApiAnswer, errorAnswer, jsonAnswer } from "@/lib/http";
import { logError } from "@/lib/log/redact";
import type { ApiDeps } from "./deps";

/** GET /api/health: liveness plus one bounded round trip to the database. */
export async function handleHealth(deps: Pick<ApiDeps, "db">): Promise<ApiAnswer> {
  try {
    const status = await probeDatabase(await deps.db());
    if (status.ok) return jsonAnswer(200, { status: "ok" });
    logError(`health check: database query failed: ${status.message}`);
  } catch (error) {
    logError("health check: database unreachable", error);
  }
  return errorAnswer(503, "unavailable", "database unreachable", { status: "unavailable" });
}
