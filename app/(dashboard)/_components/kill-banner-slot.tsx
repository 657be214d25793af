import { getDb } from "@/db/client";
import { KillBanner } from "@/components/kill-banner";
import { getKillState, type KillState } from "@/lib/ceilings";
import { logError } from "@/lib/log/redact";

// Rendered by the dashboard layout (already behind its viewer guard) above every page. A failed
// read is logged and hides the banner: it must never take the whole dashboard down with it.
export async function KillBannerSlot() {
  let state: KillState | null = null;
  try {
    state = await getKillState(await getDb());
  } catch (error) {
    logError("kill banner could not be read", error);
  }
  return state ? <KillBanner state={state} now={new Date()} /> : null;
}
