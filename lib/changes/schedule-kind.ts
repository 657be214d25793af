import { InputError } from "@/lib/errors";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { ceilings, endpoints, scheduledChanges } from "@/db/schema";
import { formatCount } from "@/lib/format";
import { ceilingLabel, parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import type { KindHandler } from "./prepared";
import { activateSchedule } from "./schedules";

// A scheduled raise is approved when it is scheduled (lib/changes/schedules.ts asks for it):
// approving moves the schedule from awaiting_approval to scheduled; the worker applies it at its time.

const Schedule = z.strictObject({ scheduleId: z.number().int().positive() });

export const schedule: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Schedule, raw);
    const [row] = await db
      .select({ s: scheduledChanges, key: endpoints.key })
      .from(scheduledChanges)
      .innerJoin(endpoints, eq(endpoints.id, scheduledChanges.endpointId))
      .where(eq(scheduledChanges.id, change.scheduleId));
    if (!row) throw new ChangeControlError("not_found", `no schedule #${change.scheduleId}`);
    if (row.s.state !== "awaiting_approval") throw InputError.of(`schedule #${row.s.id} is ${row.s.state}, not awaiting approval`);
    const [ceiling] = row.s.ceilingId === null ? [] : await db.select().from(ceilings).where(eq(ceilings.id, row.s.ceilingId));
    const what = row.s.action === "value" ? `${ceiling ? `${ceilingLabel(ceiling)} ` : ""}${formatCount(row.s.value ?? 0)}` : row.s.action;
    const when = row.s.repeat === "daily" ? `daily at ${row.s.runAt.toISOString().slice(11, 16)} UTC` : `at ${row.s.runAt.toISOString()}`;
    return {
      change,
      before: { state: "awaiting_approval" },
      after: { state: "scheduled" },
      summary: `${row.key} scheduled ${what} ${when}`,
      endpointId: row.s.endpointId,
      ceilingId: row.s.ceilingId,
      budgetId: null,
      worstBefore: null,
      worstAfter: null,
      currency: null,
      raise: true,
      confirm: null,
      mayEnd: false,
    };
  },
  async apply({ tx, request }) {
    const change = parseChange(Schedule, request.change);
    try {
      await activateSchedule(tx, change.scheduleId);
    } catch (error) {
      if (error instanceof ChangeControlError && error.code === "stale") return { stale: error.message };
      throw error;
    }
    return { stale: null, raised: null };
  },
};
