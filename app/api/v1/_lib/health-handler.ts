import { probeDatabase } from "@/lib/database-status";
import { refusalLogFailures } from "@/lib/enforcement/refusal-log";
import { classifyFailure, type UnavailableReason } from "@/lib/enforcement/unavailable";
import { type ApiAnswer, errorAnswer, jsonAnswer } from "@/lib/http";
import { logError } from "@/lib/log/redact";
import type { ApiDeps } from "./deps";

/**
 * GET /api/health: liveness plus one bounded round trip to the database, and the refusals this
 * process could not store in the refusal log since it started (0 when every refusal was logged).
 * A 503 says why, as the API's 503s do (`reason`: deadline, connection, ...).
 */
export async function handleHealth(deps: Pick<ApiDeps, "db">): Promise<ApiAnswer> {
  let reason: UnavailableReason;
  try {
    const status = await probeDatabase(await deps.db());
    if (status.ok) return jsonAnswer(200, { status: "ok", refusalLogFailures: refusalLogFailures() });
    reason = status.timedOut ? "deadline" : classifyFailure(status.error);
    logError(`health check: database query failed (${reason}): ${status.message}`);
  } catch (error) {
    logError("health check: database unreachable", error);
    reason = classifyFailure(error);
  }
  return errorAnswer(503, "unavailable", "database unreachable", { status: "unavailable", reason });
}
