import { apiRequestOf, responseOf } from "@/lib/http";
import { liveDeps } from "../../../_lib/deps";
import { handleResolve } from "../../../_lib/resolve-handler";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await context.params;
  return responseOf(await handleResolve(await apiRequestOf(request), id, "settle", liveDeps));
}
