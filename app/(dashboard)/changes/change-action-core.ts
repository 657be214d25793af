import { z } from "zod";
import { type ActionContext, defineAction } from "@/app/_lib/define-action";
import { EndpointKeyField, OverrideEndHours } from "@/app/_lib/action-fields";
import { acknowledgeBreakGlass, approveChange, cancelChange, rejectChange, type Requester } from "@/lib/changes";
import { MAX_END_SECONDS } from "@/lib/control/ends";
import { type AskChange, askForChange } from "@/lib/changes/form-ask";
import { invalidInput } from "@/lib/limits/errors";
import { FormReader, readCeiling, readPartRows } from "@/app/(dashboard)/endpoints/catalog-form";
import { BudgetFormReader, readBudgetSpec } from "@/app/(dashboard)/budgets/budget-form";
import { PartList } from "@/lib/catalog/spec";
import { decimalId } from "@/lib/http/strict-input";

// Change control from the dashboard: operators and admins ask for a raise; admins approve, reject,
// break glass and acknowledge. Who asked can never decide their own request: lib/changes checks it
// by staff id against the staff row (and the database again), and audits a refused try as
// change.refused; a forged form is answered with that error and changes nothing.

const requester = (staff: ActionContext["staff"]): Requester => ({ staffId: staff.id, email: staff.email, role: staff.role, via: "dashboard" });

const RequestId = decimalId("request id");
const BudgetKey = z.string({ error: "budget is required" }).trim().min(1, "budget is required").max(64);
const RawValue = z.string({ error: "a value is required" }).max(64, "that value is too long");
const Confirm = z.string().max(64).optional();
// Why, for the approver and the audit log; lib/changes applies its own rules on top (break glass: 10 characters).
const AskReason = z.string({ error: "a reason is required" }).trim().min(1, "a reason is required: say why, for the approver").max(500);
const Note = z.string().trim().max(500).optional();
const PlanKeyField = z.string({ error: "plan is required" }).trim().min(1, "plan is required").max(64);
const AccountField = z.string({ error: "account is required" }).max(400, "that account id is too long");

/** What a form may ask for; each kind carries the fields its edit form already has (`key` names the endpoint or budget). */
const AskKind = z.discriminatedUnion(
  "kind",
  [
    z.object({ kind: z.literal("ceiling.value"), ceilingId: decimalId("ceiling id"), input: RawValue, confirm: Confirm }),
    z.object({ kind: z.literal("ceiling.bounds"), ceilingId: decimalId("ceiling id"), min: RawValue, max: RawValue }),
    z.object({ kind: z.literal("budget.value"), key: BudgetKey, input: RawValue, confirm: Confirm }),
    z.object({
      kind: z.literal("endpoint.per_call_max"),
      key: EndpointKeyField,
      perCallMax: z
        .string()
        .trim()
        .regex(/^\d{1,15}$/, "per-call max must be a whole number")
        .transform(Number),
      confirm: Confirm,
    }),
    z.object({ kind: z.literal("endpoint.unarchive"), key: EndpointKeyField }),
    z.object({ kind: z.literal("budget.unarchive"), key: BudgetKey }),
    // The new ceiling's own fields are read by the catalog form's reader (readAskForm).
    z.object({ kind: z.literal("ceiling.add"), key: EndpointKeyField, confirm: Confirm }),
    // The plan page's value form: a ceiling by id or a budget by key; `remove` asks to remove the plan's value.
    z.object({
      kind: z.literal("plan.value"),
      key: PlanKeyField,
      ceilingId: z.string().optional(),
      budget: z.string().trim().max(64).optional(),
      input: RawValue.optional(),
      remove: z.string().optional(),
      confirm: Confirm,
    }),
    z.object({ kind: z.literal("plan.default"), key: PlanKeyField }),
    z.object({ kind: z.literal("plan.key_assignable"), key: PlanKeyField }),
    z.object({ kind: z.literal("account.plan"), account: AccountField, plan: PlanKeyField }),
    z.object({ kind: z.literal("account.unblock"), account: AccountField }),
    z.object({
      kind: z.literal("ceiling.override"),
      ceilingId: decimalId("ceiling id"),
      caller: AccountField,
      input: RawValue,
      expiresInHours: OverrideEndHours,
    }),
    z.object({ kind: z.literal("budget.override"), key: BudgetKey, caller: AccountField, input: RawValue, expiresInHours: OverrideEndHours }),
    // The new budget's fields are read by the budget form's reader, as its create form sends them.
    z.object({ kind: z.literal("budget.create") }),
    z.object({ kind: z.literal("budget.members"), key: BudgetKey, members: z.string().max(20_000) }),
    z.object({ kind: z.literal("budget.archive"), key: BudgetKey }),
    // The parts are read by the endpoint form's reader, as its edit form sends them.
    z.object({ kind: z.literal("endpoint.prices"), key: EndpointKeyField }),
    // The billing day as the endpoint's edit form sends it; lib/changes checks its range.
    z.object({
      kind: z.literal("endpoint.billing_day"),
      key: EndpointKeyField,
      billingDay: z
        .string({ error: "billing day is required" })
        .trim()
        .regex(/^\d{1,2}$/, "billing day must be a whole number from 1 to 28")
        .transform(Number),
    }),
  ],
  { error: "unknown kind of change" },
);

// "for N minutes/hours" or "until" a UTC date and time (a datetime-local field, read as UTC); neither is a lasting raise.
const End = z
  .object({
    endsFor: z.string().trim().max(8).optional(),
    endsUnit: z.enum(["minutes", "hours"], { error: "the end is in minutes or hours" }).optional(),
    endsAt: z.string().trim().max(32).optional(),
  })
  .transform((e, ctx): { endsAfterSeconds?: number; endsAt?: Date } => {
    const forText = e.endsFor ?? "";
    const atText = e.endsAt ?? "";
    if (forText !== "" && atText !== "") {
      ctx.addIssue({ code: "custom", message: "give the raise one end: for a while, or until a time, not both" });
      return z.NEVER;
    }
    if (forText !== "") {
      if (!/^\d{1,6}$/.test(forText) || Number(forText) === 0) {
        ctx.addIssue({ code: "custom", message: `the raise's length must be a whole number above 0, got '${forText.slice(0, 20)}'` });
        return z.NEVER;
      }
      const seconds = Number(forText) * (e.endsUnit === "minutes" ? 60 : 3600);
      if (seconds > MAX_END_SECONDS) {
        ctx.addIssue({ code: "custom", message: `a temporary raise lasts at most ${MAX_END_SECONDS / 86_400} days` });
        return z.NEVER;
      }
      return { endsAfterSeconds: seconds };
    }
    if (atText !== "") {
      const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d)?Z?$/.exec(atText);
      const at = m ? new Date(`${m[1]}T${m[2]}:00Z`) : null;
      if (!m || !at || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 16) !== `${m[1]}T${m[2]}`) {
        ctx.addIssue({ code: "custom", message: `the end must be a UTC date and time such as 2026-03-05T18:00, got '${atText.slice(0, 32)}'` });
        return z.NEVER;
      }
      return { endsAt: at };
    }
    return {};
  });

const AskCommon = z.object({ reason: AskReason }).and(End);
type Ask = { ask: AskChange; reason: string; endsAfterSeconds?: number; endsAt?: Date };

function parsed<T>(schema: z.ZodType<T>, fields: Record<string, string>): T {
  const r = schema.safeParse(fields);
  if (!r.success) throw invalidInput(r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
  return r.data;
}

/** The form as one ask: its kind's fields, the reason and the end; a refused field is named. */
export function readAskForm(fields: Record<string, string>): Ask {
  const kind = parsed(AskKind, fields);
  const common = parsed(AskCommon, fields);
  const ask = ((): AskChange => {
    switch (kind.kind) {
      case "ceiling.value":
        return { kind: kind.kind, ceilingId: kind.ceilingId, input: kind.input, confirm: kind.confirm };
      case "ceiling.bounds":
        return { kind: kind.kind, ceilingId: kind.ceilingId, min: kind.min, max: kind.max };
      case "budget.value":
        return { kind: kind.kind, budgetKey: kind.key, input: kind.input, confirm: kind.confirm };
      case "endpoint.per_call_max":
        return { kind: kind.kind, endpointKey: kind.key, perCallMax: kind.perCallMax, confirm: kind.confirm };
      case "endpoint.unarchive":
        return { kind: kind.kind, endpointKey: kind.key };
      case "budget.unarchive":
        return { kind: kind.kind, budgetKey: kind.key };
      case "ceiling.add": {
        const r = new FormReader(fields);
        return r.done({ kind: kind.kind, endpointKey: kind.key, ceiling: readCeiling(r, fields, "ceiling"), confirm: kind.confirm });
      }
      case "plan.value": {
        const ceilingId = kind.ceilingId ? Number(kind.ceilingId) : null;
        if ((ceilingId === null) === !kind.budget || (ceilingId !== null && !(Number.isSafeInteger(ceilingId) && ceilingId > 0))) {
          throw invalidInput([{ path: "ceilingId", message: "say which ceiling or which budget, one of them" }]);
        }
        const target = ceilingId !== null ? { ceilingId } : { budgetKey: kind.budget ?? "" };
        return { kind: kind.kind, planKey: kind.key, target, input: kind.remove ? null : (kind.input ?? ""), confirm: kind.confirm };
      }
      case "plan.default":
      case "plan.key_assignable":
        return { kind: kind.kind, planKey: kind.key };
      case "account.plan":
        return { kind: kind.kind, account: kind.account, plan: kind.plan };
      case "account.unblock":
        return { kind: kind.kind, account: kind.account };
      case "ceiling.override":
        return { kind: kind.kind, ceilingId: kind.ceilingId, caller: kind.caller, input: kind.input, expiresAfterSeconds: kind.expiresInHours };
      case "budget.override":
        return { kind: kind.kind, budgetKey: kind.key, caller: kind.caller, input: kind.input, expiresAfterSeconds: kind.expiresInHours };
      case "budget.create": {
        const r = new BudgetFormReader(fields);
        return r.done({ kind: kind.kind, spec: readBudgetSpec(r) });
      }
      case "budget.members":
        return {
          kind: kind.kind,
          budgetKey: kind.key,
          members: kind.members
            .split(",")
            .map((m) => m.trim())
            .filter((m) => m !== ""),
        };
      case "budget.archive":
        return { kind: kind.kind, budgetKey: kind.key };
      case "endpoint.prices": {
        const r = new FormReader(fields);
        const typed = PartList.safeParse(readPartRows(r, r.text("parts")));
        return r.done({ kind: kind.kind, endpointKey: kind.key, parts: typed.success ? typed.data : [] });
      }
      case "endpoint.billing_day":
        return { kind: kind.kind, endpointKey: kind.key, billingDay: kind.billingDay };
    }
  })();
  return { ask, reason: common.reason, endsAfterSeconds: common.endsAfterSeconds, endsAt: common.endsAt };
}

// Pending requests show on the overview, the endpoint pages and the nav badge of every page.
const everyPage = ["/"];

export const askForApprovalCore = defineAction({
  role: "operator",
  boundary: "change.request",
  rejected: "change.rejected",
  input: readAskForm,
  run: async ({ staff, db }, input) => {
    const r = await askForChange(db, { ...input, requester: requester(staff) });
    return {
      message: `Asked for approval: request #${r.id}, ${r.summary}. Another admin must approve it within 24 hours; approvers are alerted.`,
      link: { href: `/changes/${r.id}`, label: `Request #${r.id}` },
      revalidate: everyPage,
    };
  },
});

export const breakGlassCore = defineAction({
  role: "admin",
  boundary: "change.break_glass",
  rejected: "change.rejected",
  input: readAskForm,
  run: async ({ staff, db }, input) => {
    const r = await askForChange(db, { ...input, requester: requester(staff), breakGlass: true });
    return {
      message: `Break glass: ${r.summary} is in force now. Every alert destination is told, and it stays on the overview until another admin acknowledges it.`,
      link: { href: `/changes/${r.id}`, label: `Request #${r.id}` },
      revalidate: everyPage,
    };
  },
});

const request = (id: number) => `/changes/${id}`;

export const approveChangeCore = defineAction({
  role: "admin",
  boundary: "change.approve",
  input: z.object({ id: RequestId, note: Note }),
  run: async (ctx, input) => {
    const r = await approveChange(ctx.db, { id: input.id, approver: requester(ctx.staff), note: input.note || undefined });
    // Stale is an outcome, not a failure: the request is closed and the answer says what moved.
    const message = r.applied ? `Approved and applied: ${r.request.summary}.` : `Not applied: ${r.message}.`;
    return { message, revalidate: [...everyPage, request(input.id)] };
  },
});

export const rejectChangeCore = defineAction({
  role: "admin",
  boundary: "change.reject",
  input: z.object({ id: RequestId, note: z.string({ error: "say why it is rejected" }).trim().min(1, "say why it is rejected, for the requester").max(500) }),
  run: async (ctx, input) => {
    const r = await rejectChange(ctx.db, { id: input.id, approver: requester(ctx.staff), note: input.note });
    return { message: `Request #${r.id} is rejected: nothing changed.`, revalidate: [...everyPage, request(input.id)] };
  },
});

export const cancelChangeCore = defineAction({
  role: "operator",
  boundary: "change.cancel",
  input: z.object({ id: RequestId }),
  run: async (ctx, input) => {
    const r = await cancelChange(ctx.db, { id: input.id, requester: requester(ctx.staff) });
    return { message: `Request #${r.id} is cancelled: nothing changed.`, revalidate: [...everyPage, request(input.id)] };
  },
});

export const acknowledgeBreakGlassCore = defineAction({
  role: "admin",
  boundary: "change.acknowledge",
  input: z.object({ id: RequestId }),
  run: async (ctx, input) => {
    const r = await acknowledgeBreakGlass(ctx.db, { id: input.id, admin: requester(ctx.staff) });
    return { message: `Break glass #${r.id} is acknowledged.`, revalidate: [...everyPage, request(input.id)] };
  },
});
