import { z } from "zod";
import { type ActionContext, defineAction } from "@/app/_lib/define-action";
import { EndpointKeyField, Reason } from "@/app/_lib/action-fields";
import { cancelSchedule, createSchedule, type Requester } from "@/lib/changes";
import { calendarTextIsReal } from "@/lib/changes/schedule-time";
import { decimalId } from "@/lib/http/strict-input";

// Schedules from the endpoint page. Operators and admins may schedule and cancel; lib/changes
// checks the rest against the staff row: a value that is not a raise is an admin's (as the direct
// edit), a raise waits for a second admin's approval, and refused input is audited there.

const requester = (staff: ActionContext["staff"]): Requester => ({ staffId: staff.id, email: staff.email, role: staff.role, via: "dashboard" });

// A datetime-local field ("2026-12-02T22:00"), read as UTC: the form says so beside it.
const RunAt = z
  .string()
  .trim()
  .max(32)
  .optional()
  .transform((text, ctx): Date | undefined => {
    if (!text) return undefined;
    // 2027-02-30 or 24:00 would roll over to another day: a date must read back as typed.
    const d = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text) && calendarTextIsReal(text) ? new Date(`${text}:00Z`) : new Date(Number.NaN);
    if (Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: "custom", message: `the time to run must be a date and time such as 2026-12-02T22:00 (UTC), got '${text.slice(0, 32)}'` });
      return z.NEVER;
    }
    return d;
  });

const CreateForm = z.object({
  endpointKey: EndpointKeyField,
  // "" is every ceiling of the endpoint (a kill or a restore).
  ceilingId: z.union([z.literal(""), decimalId("ceiling id")]).optional(),
  action: z.enum(["kill", "restore", "value"], { error: "the action must be kill, restore or value" }),
  value: z.string().max(64, "that value is too long").optional(),
  // A raise of 5x or more is typed twice, as in the value form.
  confirm: z.string().max(64, "that confirmation is too long").optional(),
  repeat: z.enum(["once", "daily"], { error: "repeat must be once or daily" }),
  runAt: RunAt,
  timeOfDay: z.string().max(16).optional(),
  reason: Reason,
});

const CancelForm = z.object({ scheduleId: decimalId("schedule id"), reason: Reason });

const pages = (endpointKey: string) => [`/endpoints/${endpointKey}`];

export const createScheduleCore = defineAction({
  role: "operator",
  boundary: "schedule.create",
  rejected: "schedule.rejected",
  input: CreateForm,
  run: async ({ staff, db }, input) => {
    const s = await createSchedule(db, {
      endpointKey: input.endpointKey,
      ceilingId: input.ceilingId === "" || input.ceilingId === undefined ? null : input.ceilingId,
      action: input.action,
      value: input.action === "value" ? (input.value ?? "") : null,
      confirm: input.action === "value" ? (input.confirm ?? null) : null,
      repeat: input.repeat,
      runAt: input.repeat === "once" ? (input.runAt ?? null) : null,
      timeOfDay: input.repeat === "daily" ? (input.timeOfDay ?? "") : null,
      reason: input.reason,
      by: requester(staff),
    });
    return { message: `${s.message}.`, revalidate: pages(input.endpointKey) };
  },
});

export const cancelScheduleCore = defineAction({
  role: "operator",
  boundary: "schedule.cancel",
  input: CancelForm,
  run: async ({ staff, db }, input) => {
    const s = await cancelSchedule(db, { id: input.scheduleId, by: requester(staff), reason: input.reason });
    return { message: `Schedule #${s.id} cancelled: it will not run.`, revalidate: ["/"] };
  },
});
