import { after } from "next/server";
import { getEnforcementDb } from "@/db/client";
import { demoProvider, handleSubscribe, logToConsole } from "@/lib/demo";
import { env } from "@/lib/env";
import { apiError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * The demo service's public subscribe form. No staff session: it stands for a service's own
 * endpoint, open to anonymous visitors, and is bounded by the ceilings of email.subscribe.
 * DEMO_SERVICE=off removes it.
 */
export async function POST(request: Request): Promise<Response> {
  const e = env();
  if (e.DEMO_SERVICE === "off") return apiError(404, "not_found", "the demo service is off");
  return handleSubscribe(request, {
    db: getEnforcementDb,
    provider: demoProvider(),
    minMs: e.DEMO_SUBSCRIBE_MIN_MS,
    defer: (work) => after(work),
    log: logToConsole,
  });
}
