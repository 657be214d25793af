import { probeDatabase } from "@/lib/database-status";
import { refusalLogFailures } from "@/lib/enforcement/refusal-log";
import { type ApiAnswer, errorAnswer, jsonAnswer } from "@/lib/http";
import { logError } from "@/lib/log/redact";
import type { ApiDeps } from "./deps";

/**
 * GET /api/health: liveness plus one bounded round trip to the database, and the refusals this
 * process could not store in the refusal log since it started (0 when every refusal was logged).
 */
export async function handleHealth(deps: Pick<ApiDeps, "db">): Promise<ApiAnswer> {
  try {
    const status = await probeDatabase(await deps.db());
    if (status.ok) return jsonAnswer(200, { status: "ok", refusalLogFailures: refusalLogFailures() });
    logError(`health check: database query failed: ${status.message}`);
  } catch (error) {
    logError("health check: database unreachable", error);
  }
  return errorAnswer(503, "unavailable", "database unreachable", { status: "unavailable" });
}
