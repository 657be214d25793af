import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { logError } from "@/lib/log/redact";

export const dynamic = "force-dynamic";

/** Liveness plus one round trip to the database. No auth: load balancers and Playwright poll it. */
export async function GET(): Promise<Response> {
  try {
    const db = await getDb();
    await db.execute(sql`select 1`);
    return Response.json({ status: "ok" }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    logError("health check: database query failed", error);
    return Response.json({ status: "unavailable", error: "database unreachable" }, { status: 503, headers: { "cache-control": "no-store" } });
  }
}
