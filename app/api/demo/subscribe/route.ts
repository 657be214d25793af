import { after } from "next/server";
import { getEnforcementDb } from "@/db/client";
import { demoProvider, handleSubscribe, logToConsole } from "@/lib/demo";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

/**
 * The demo service's public subscribe form. No staff session: it stands for a service's own
 * endpoint, open to anonymous visitors, and is bounded by the ceilings of email.subscribe.
 * DEMO_SERVICE=off removes it.
 */
export async function POST(request: Request): Promise<Response> {
  const e = env();
  if (e.DEMO_SERVICE === "off") return Response.json({ error: { code: "not_found", message: "the demo service is off" } }, { status: 404 });
  return handleSubscribe(request, {
    db: getEnforcementDb,
    provider: demoProvider(),
    minMs: e.DEMO_SUBSCRIBE_MIN_MS,
    defer: (work) => after(work),
    log: logToConsole,
  });
}
