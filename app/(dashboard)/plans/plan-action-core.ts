import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { Reason } from "@/app/_lib/action-fields";
import { formatCount, formatMoneyText } from "@/lib/format";
import { decimalId } from "@/lib/http/strict-input";
import { createPlan, deletePlan, PlanKey, removePlanValue, setDefaultPlan, setPlanKeyAssignable, setPlanValue, updatePlan, type PlanTarget } from "@/lib/plans";

// The plans' server actions. Plans, their values and the default plan are an admin's: a plan value
// raises or lowers what thousands of accounts may spend at once. Viewers and operators read the
// pages; each action checks the role itself. A plan shows on its page, the plans list and (through
// what binds) every endpoint's and budget's page: the whole dashboard is revalidated.
// A raise (a value above the one in force, a removal below the own value, a looser default, marking
// a plan assignable by key) is refused here with approval_required: the page offers to ask for it
// (change.request), and a second admin's approval applies it (lib/changes/plan-kinds.ts).

const everyPage = ["/"];
// Raw text, bounded in size: lib/plans reads it by its own rules and names each field's problem.
const Raw = (what: string, max: number) => z.string({ error: `${what} is required` }).max(max, `${what} must be ${max} characters or fewer`);
const KeyField = z.string({ error: "plan is required" }).trim().pipe(PlanKey);
const RawValue = z.string({ error: "a value is required" }).max(64, "that value is too long");

/** Where a value goes: a per-caller ceiling by id, or a per-account budget by key (exactly one). */
const Target = z
  .object({ ceilingId: decimalId("ceiling").optional(), budget: z.string().trim().min(1).max(64).optional() })
  .refine((t) => (t.ceilingId === undefined) !== (t.budget === undefined), "say which ceiling or which budget, one of them")
  .transform((t): PlanTarget => (t.ceilingId !== undefined ? { ceilingId: t.ceilingId } : { budgetKey: t.budget ?? "" }));

export const createPlanCore = defineAction({
  role: "admin",
  boundary: "plan.create",
  rejected: "plan.rejected",
  input: z.object({ key: Raw("key", 200), name: Raw("name", 500), description: Raw("description", 2000).optional(), reason: Reason }),
  run: async ({ actor, db }, input) => {
    const plan = await createPlan(db, { ...input, key: input.key.trim(), actor });
    return {
      message: `Created plan ${plan.key}. It sets no values yet: every account on it gets the ceilings' and budgets' own.`,
      revalidate: everyPage,
      redirectTo: `/plans/${plan.key}`,
    };
  },
});

export const updatePlanCore = defineAction({
  role: "admin",
  boundary: "plan.update",
  rejected: "plan.rejected",
  input: z.object({
    key: KeyField,
    expectedVersion: decimalId("version"),
    name: Raw("name", 500),
    description: Raw("description", 2000).optional(),
    reason: Reason,
  }),
  run: async ({ actor, db }, input) => {
    const changes = await updatePlan(db, {
      planKey: input.key,
      expectedVersion: input.expectedVersion,
      name: input.name,
      description: input.description,
      actor,
      reason: input.reason,
    });
    return { message: `Saved ${input.key}: ${changes.map((c) => c.field).join(" and ")} changed.`, revalidate: everyPage };
  },
});

export const setPlanValueCore = defineAction({
  role: "admin",
  boundary: "plan.value.set",
  input: z
    .object({
      key: KeyField,
      ceilingId: z.string().optional(),
      budget: z.string().optional(),
      input: RawValue,
      confirm: z.string().max(64).optional(),
      reason: Reason,
    })
    .transform(({ ceilingId, budget, ...rest }, ctx) => {
      const target = Target.safeParse({ ceilingId: ceilingId || undefined, budget: budget || undefined });
      if (!target.success) {
        ctx.addIssue({ code: "custom", message: target.error.issues[0]?.message ?? "say which ceiling or which budget" });
        return z.NEVER;
      }
      return { ...rest, target: target.data };
    }),
  run: async ({ actor, db }, input) => {
    const r = await setPlanValue(db, { planKey: input.key, target: input.target, input: input.input, confirm: input.confirm, actor, reason: input.reason });
    const show = (v: number) => (r.currency ? formatMoneyText(v, r.currency) : formatCount(v));
    const clamp = r.clamped && r.typed !== null ? ` (you typed ${show(r.typed)}; clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    const applied = r.applied ?? 0;
    const what = applied === 0 ? `every account on ${r.planKey} is refused on ${r.on}` : `${r.planKey} has ${show(applied)} on ${r.on}`;
    return { message: `Saved: ${what}${clamp}. It binds from the next reservation.`, revalidate: everyPage };
  },
});

export const removePlanValueCore = defineAction({
  role: "admin",
  boundary: "plan.value.remove",
  input: z
    .object({ key: KeyField, ceilingId: z.string().optional(), budget: z.string().optional(), reason: Reason })
    .transform(({ ceilingId, budget, ...rest }, ctx) => {
      const target = Target.safeParse({ ceilingId: ceilingId || undefined, budget: budget || undefined });
      if (!target.success) {
        ctx.addIssue({ code: "custom", message: target.error.issues[0]?.message ?? "say which ceiling or which budget" });
        return z.NEVER;
      }
      return { ...rest, target: target.data };
    }),
  run: async ({ actor, db }, input) => {
    const r = await removePlanValue(db, { planKey: input.key, target: input.target, actor, reason: input.reason });
    const own = r.currency ? formatMoneyText(r.own, r.currency) : formatCount(r.own);
    return { message: `Removed: accounts on ${r.planKey} get ${r.on}'s own ${own} from the next reservation.`, revalidate: everyPage };
  },
});

export const setDefaultPlanCore = defineAction({
  role: "admin",
  boundary: "plan.default",
  input: z.object({ key: KeyField, reason: Reason }),
  run: async ({ actor, db }, input) => {
    const r = await setDefaultPlan(db, { planKey: input.key, actor, reason: input.reason });
    return {
      message: `${r.key} is the default plan (was ${r.previous ?? "none"}): every account not assigned a plan is on it from the next reservation.`,
      revalidate: everyPage,
    };
  },
});

export const setPlanKeyAssignableCore = defineAction({
  role: "admin",
  boundary: "plan.key_assignable",
  input: z.object({ key: KeyField, assignable: z.enum(["true", "false"], { error: "assignable is true or false" }), reason: Reason }),
  run: async ({ actor, db }, input) => {
    const r = await setPlanKeyAssignable(db, { planKey: input.key, assignable: input.assignable === "true", actor, reason: input.reason });
    return {
      message: r.keyAssignable ? `API keys may move accounts onto ${r.key}.` : `API keys may no longer move accounts onto ${r.key} when that loosens them.`,
      revalidate: everyPage,
    };
  },
});

export const deletePlanCore = defineAction({
  role: "admin",
  boundary: "plan.delete",
  input: z.object({ key: KeyField, reason: Reason }),
  run: async ({ actor, db }, input) => {
    const r = await deletePlan(db, { planKey: input.key, actor, reason: input.reason });
    return { message: `Deleted plan ${r.key}; its values are kept in the audit log.`, revalidate: everyPage, redirectTo: "/plans" };
  },
});
