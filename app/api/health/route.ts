import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { apiError, apiJson } from "@/lib/http/responses";
import { logError } from "@/lib/log/redact";

export const dynamic = "force-dynamic";

/** Liveness plus one round trip to the database. No auth: load balancers and Playwright poll it. */
export async function GET(): Promise<Response> {
  try {
    const db = await getDb();
    await db.execute(sql`select 1`);
    return apiJson(200, { status: "ok" });
  } catch (error) {
    logError("health check: database query failed", error);
    return apiError(503, "unavailable", "database unreachable", { status: "unavailable" });
  }
}
