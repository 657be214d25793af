import { apiRequestOf, responseOf } from "@/lib/http";
import { liveDeps } from "../../_lib/deps";
import { handleEndpointStatus } from "../../_lib/status-handler";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(request: Request, context: { params: Promise<{ key: string }> }): Promise<Response> {
  const { key } = await context.params;
  return responseOf(await handleEndpointStatus(await apiRequestOf(request), key, liveDeps));
}
