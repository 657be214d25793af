import { getDb } from "@/db/client";
import { AlertsBadge } from "@/components/alerts-badge";
import { readAlertBadge, type AlertBadge } from "@/lib/alerts";
import { env } from "@/lib/env";

// Rendered by the dashboard layout (already behind its viewer guard) on every page. A failure
// here is logged and hides the badge: it must never take the whole dashboard down with it.
export async function AlertsNavBadge() {
  let badge: AlertBadge | null = null;
  try {
    badge = await readAlertBadge(await getDb(), { silentAfterSeconds: env().WORKER_SILENT_AFTER_SECONDS });
  } catch (error) {
    console.error("alerts badge could not be read", error);
  }
  return <AlertsBadge badge={badge} />;
}
