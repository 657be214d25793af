import type { Db } from "@/db/client";
import { raiseSilentWorkers, readWorkerHealth } from "./heartbeat";
import { countUnacknowledged } from "./inbox";

export type AlertBadge = { unacknowledged: number; workerSilent: boolean; workerNeverRan: boolean };

/**
 * The navigation badge. Reading it also raises a silent worker as an alert (once per silence):
 * when the only worker has stopped, no other worker is left to notice, but staff still load pages.
 * The alert is queued for delivery and goes out as soon as a worker runs again.
 */
export async function readAlertBadge(db: Db, p: { silentAfterSeconds: number }): Promise<AlertBadge> {
  await raiseSilentWorkers(db, p);
  const workers = await readWorkerHealth(db, p);
  return {
    unacknowledged: await countUnacknowledged(db),
    // Silent when no worker is beating: one stale row among running copies is its own alert.
    workerSilent: workers.length > 0 && workers.every((w) => w.state === "silent"),
    workerNeverRan: workers.length === 0,
  };
}
