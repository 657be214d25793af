import { apiRequestOf, responseOf } from "@/lib/http";
import { liveDeps } from "../_lib/deps";
import { handleReserve } from "../_lib/reserve-handler";

// Node runtime (postgres.js) and never cached: every call is decided by the database.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return responseOf(await handleReserve(await apiRequestOf(request), liveDeps));
}
