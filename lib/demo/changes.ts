import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, staff } from "@/db/schema";
import { requestChange } from "@/lib/changes";

// One raise waiting for a second admin, so the overview, the endpoint page and Changes show change
// control from the first start: the operator on call asks for email.subscribe's daily ceiling to go
// from 100 to 150 for four hours, for a newsletter launch. Either demo admin may approve it.

export const DEMO_REQUEST_REASON = "Newsletter launch this afternoon: 150 sign-up emails for four hours";

export async function seedDemoChangeRequest(tx: Db): Promise<number> {
  const [operator] = await tx.select({ id: staff.id, email: staff.email }).from(staff).where(eq(staff.email, "operator@ceilings.local"));
  const [daily] = await tx
    .select({ id: ceilings.id })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(and(eq(endpoints.key, "email.subscribe"), eq(ceilings.scope, "global"), eq(ceilings.window, "utc_day"), eq(ceilings.metric, "units")));
  if (!operator || !daily) return 0;
  await requestChange(tx, {
    kind: "ceiling.value",
    change: { ceilingId: daily.id, value: 150 },
    requester: { staffId: operator.id, email: operator.email, role: "operator", via: "dashboard" },
    reason: DEMO_REQUEST_REASON,
    endsAfterSeconds: 4 * 3600,
  });
  return 1;
}
