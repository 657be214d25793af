import { getDb } from "@/db/client";
import { responseOf } from "@/lib/http";
import { handleHealth } from "../v1/_lib/health-handler";

export const dynamic = "force-dynamic";

/** Liveness plus one round trip to the database. No auth: load balancers and Playwright poll it. */
export async function GET(): Promise<Response> {
  // The dashboard's own probe: bounded, so a failing-over cluster answers 503 instead of hanging.
  return responseOf(await handleHealth({ db: getDb }));
}
