import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { OptionalReason, OverrideEndHours, Reason } from "@/app/_lib/action-fields";
import { untilText } from "@/lib/control/ends";
import { adjustBudget, createBudget, killBudget, removeBudgetOverride, restoreBudget, setBudgetArchived, setBudgetOverride, updateBudget } from "@/lib/budgets";
import { BudgetKey } from "@/lib/budgets/spec";
import { formatMoneyText } from "@/lib/format";
import { decimalId } from "@/lib/http/strict-input";
import { BudgetFormReader, readBudgetFields, readBudgetSpec } from "./budget-form";

// The budgets' server actions. Admins define and change budgets (create, edit, value, archive,
// overrides); operators and admins kill and restore them, as they do endpoints. A budget shows on
// the overview, the Budgets page, its own page and its members' pages: the whole dashboard is
// revalidated ("/" as a layout).

const everyPage = ["/"];
const KeyField = z.string({ error: "budget is required" }).trim().pipe(BudgetKey);
// The amount itself is read by lib/budgets (one rule for money typed by a person); here the raw
// text is only bounded in size.
const RawMoney = z.string({ error: "a value is required" }).max(64, "that value is too long");

function key(r: BudgetFormReader): string {
  const parsed = BudgetKey.safeParse(r.text("key").trim());
  if (!parsed.success) r.issues.push({ path: "key", message: parsed.error.issues[0]?.message ?? "invalid key" });
  return parsed.success ? parsed.data : "";
}

export const createBudgetCore = defineAction({
  role: "admin",
  boundary: "budget.create",
  rejected: "budget.rejected",
  input: (fields) => {
    const r = new BudgetFormReader(fields);
    return r.done({ spec: readBudgetSpec(r), reason: r.text("reason") });
  },
  run: async ({ actor, db }, input) => {
    const row = await createBudget(db, { spec: input.spec, actor, reason: input.reason });
    return { message: `Created budget ${row.key}: it binds the next reservation on its members.`, revalidate: everyPage, redirectTo: `/budgets/${row.key}` };
  },
});

export const updateBudgetCore = defineAction({
  role: "admin",
  boundary: "budget.update",
  rejected: "budget.rejected",
  input: (fields) => {
    const r = new BudgetFormReader(fields);
    return r.done({ key: key(r), expectedVersion: r.whole("expectedVersion", "version") ?? 0, fields: readBudgetFields(r), reason: r.text("reason") });
  },
  run: async ({ actor, db }, input) => {
    const changes = await updateBudget(db, { ...input, actor });
    const moved = changes.find((c) => c.field === "value");
    const note = moved ? ` The value moved to ${formatMoneyText(Number(moved.after))} to fit the new bounds.` : "";
    return { message: `Saved ${input.key}: ${changes.map((c) => c.field).join(", ")} changed.${note}`, revalidate: everyPage };
  },
});

export const adjustBudgetCore = defineAction({
  role: "admin",
  boundary: "budget.adjust",
  input: z.object({ key: KeyField, expectedVersion: decimalId("version"), input: RawMoney, reason: Reason, confirm: z.string().max(64).optional() }),
  run: async ({ actor, db }, input) => {
    const r = await adjustBudget(db, { ...input, actor });
    const money = (m: number) => formatMoneyText(m, r.currency);
    const clamp = r.clamped ? ` (you typed ${money(r.typed)}; clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    const what =
      r.kind === "kill"
        ? "Budget killed: set to 0"
        : r.kind === "restore"
          ? `Budget restored to ${money(r.applied)}`
          : `Saved: ${money(r.previous)} → ${money(r.applied)}`;
    return { message: `${what}${clamp}.`, revalidate: everyPage };
  },
});

export const killBudgetCore = defineAction({
  role: "operator",
  boundary: "budget.kill",
  input: z.object({ key: KeyField, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const r = await killBudget(db, { ...input, actor });
    return {
      message: `${r.key} is killed (it was ${formatMoneyText(r.previous, r.currency)}): every call on its members is refused until it is restored.`,
      revalidate: everyPage,
    };
  },
});

export const restoreBudgetCore = defineAction({
  role: "operator",
  boundary: "budget.restore",
  input: z.object({ key: KeyField, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const r = await restoreBudget(db, { ...input, actor });
    return { message: `${r.key} is restored to ${formatMoneyText(r.applied, r.currency)}.`, revalidate: everyPage };
  },
});

const archiveCore = (archived: boolean) =>
  defineAction({
    role: "admin",
    boundary: archived ? "budget.archive" : "budget.unarchive",
    input: z.object({ key: KeyField, reason: Reason }),
    run: async ({ actor, db }, input) => {
      await setBudgetArchived(db, { ...input, archived, actor });
      return {
        message: archived
          ? `${input.key} is archived: it charges and refuses nothing; its history stays.`
          : `${input.key} counts again from the next reservation.`,
        revalidate: everyPage,
      };
    },
  });

export const archiveBudgetCore = archiveCore(true);
export const unarchiveBudgetCore = archiveCore(false);

export const setBudgetOverrideCore = defineAction({
  role: "admin",
  boundary: "budget.override",
  input: z.object({ key: KeyField, caller: z.string().max(200), input: RawMoney, reason: Reason, expiresInHours: OverrideEndHours }),
  run: async ({ actor, db }, input) => {
    const r = await setBudgetOverride(db, { ...input, expiresAfterSeconds: input.expiresInHours, actor });
    const applied = r.applied ?? 0;
    const clamp = r.clamped ? ` (clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    return {
      message: `${
        applied === 0 ? `${r.caller} is blocked on every member of ${r.key}` : `${r.caller} now has ${formatMoneyText(applied, r.currency)} on ${r.key}${clamp}`
      }${untilText(r.expiresAt)}.`,
      revalidate: everyPage,
    };
  },
});

export const removeBudgetOverrideCore = defineAction({
  role: "admin",
  boundary: "budget.override_remove",
  input: z.object({ key: KeyField, caller: z.string().max(200), reason: Reason }),
  run: async ({ actor, db }, input) => {
    const r = await removeBudgetOverride(db, { ...input, actor });
    return { message: `${r.caller} is back on the budget's own value.`, revalidate: everyPage };
  },
});
