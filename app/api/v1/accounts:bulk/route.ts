import { apiRequestOf, responseOf } from "@/lib/http";
import { MAX_BULK_BODY_BYTES } from "@/lib/http/schemas";
import { liveDeps } from "../_lib/deps";
import { handleAssignPlans } from "../_lib/accounts-handler";

// The folder is named as the path reads, `accounts:bulk` (Google's custom-method style): Next's App
// Router serves a literal colon in a segment name (checked on Next 16.4 with `next dev` and with
// `next build` + `next start`, where the build lists the route as /api/v1/accounts:bulk), and it
// does not clash with accounts/[account], which is another segment.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return responseOf(await handleAssignPlans(await apiRequestOf(request, MAX_BULK_BODY_BYTES), liveDeps));
}
