import { getDb } from "@/db/client";
import { env } from "@/lib/env";
import { checkMetricsAccess, metrics, refreshDatabaseGauges } from "@/lib/metrics";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** GET /api/metrics: Prometheus text exposition of this app process, behind METRICS_TOKEN. */
export async function GET(request: Request): Promise<Response> {
  const access = checkMetricsAccess(request.headers.get("authorization"), env().METRICS_TOKEN);
  if (!access.ok) return new Response(`${access.message}\n`, { status: access.status, headers: { "cache-control": "no-store" } });
  const m = metrics("app");
  try {
    await refreshDatabaseGauges(await getDb(), m);
  } catch (error) {
    console.error("metrics: database gauges failed", error);
  }
  return new Response(await m.registry.metrics(), { headers: { "content-type": m.registry.contentType, "cache-control": "no-store" } });
}
