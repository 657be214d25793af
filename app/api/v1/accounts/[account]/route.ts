import { apiRequestOf, responseOf } from "@/lib/http";
import { liveDeps } from "../../_lib/deps";
import { handleAssignPlan, handleGetAccount } from "../../_lib/accounts-handler";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(request: Request, context: { params: Promise<{ account: string }> }): Promise<Response> {
  const { account } = await context.params;
  return responseOf(await handleGetAccount(await apiRequestOf(request), account, liveDeps));
}

export async function PUT(request: Request, context: { params: Promise<{ account: string }> }): Promise<Response> {
  const { account } = await context.params;
  return responseOf(await handleAssignPlan(await apiRequestOf(request), account, liveDeps));
}
