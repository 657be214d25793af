import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { ChangeControlError } from "./errors";

// Placeholder until the timing helper's schedules land (it replaces this file and keeps this
// signature): the one function core's applier of a "schedule" request calls.

/** An approved scheduled raise becomes due: awaiting_approval → scheduled, in the approval's transaction. */
export async function activateSchedule(tx: Db, scheduleId: number): Promise<void> {
  const rows = resultRows<{ id: number }>(
    await tx.execute(sql`update scheduled_changes set state = 'scheduled' where id = ${scheduleId} and state = 'awaiting_approval' returning id`),
  );
  if (rows.length === 0) throw new ChangeControlError("stale", `schedule #${scheduleId} is no longer awaiting approval (cancelled or gone): nothing was applied`);
}
