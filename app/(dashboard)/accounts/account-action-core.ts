import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { OptionalReason, Reason } from "@/app/_lib/action-fields";
import { assignPlan, blockAccount, unblockAccount } from "@/lib/accounts";

// An account's server actions. Blocking stops spend, like a kill: operators may do it. Unblocking
// raises spend again (every endpoint at once), so it is an admin's, as raising a value is; so is
// moving an account to another plan. Each names the account, which lib/accounts reads as
// enforcement keys it (and audits when it cannot): here the raw text is only bounded in size.
// An account shows on its own page, in search results and in the top accounts: the whole
// dashboard is revalidated ("/" as a layout).

const everyPage = ["/"];
const AccountField = z.string({ error: "account is required" }).max(400, "that account id is too long");
const PlanField = z.string({ error: "plan is required" }).trim().min(1, "choose a plan").max(64, "that plan key is too long");

export const blockAccountCore = defineAction({
  role: "operator",
  boundary: "account.block",
  rejected: "account.rejected",
  input: z.object({ account: AccountField, reason: Reason }),
  run: async ({ actor, db }, input) => {
    await blockAccount(db, { account: input.account, actor, reason: input.reason });
    return {
      message: `${input.account.trim()} is blocked: every call naming it is refused on every endpoint (gate blocked) until an admin unblocks it.`,
      revalidate: everyPage,
    };
  },
});

export const unblockAccountCore = defineAction({
  role: "admin",
  boundary: "account.unblock",
  rejected: "account.rejected",
  input: z.object({ account: AccountField, reason: Reason }),
  run: async ({ actor, db }, input) => {
    await unblockAccount(db, { account: input.account, actor, reason: input.reason });
    return { message: `${input.account.trim()} is unblocked: its plan, overrides and counters bind it again from the next call.`, revalidate: everyPage };
  },
});

export const assignPlanCore = defineAction({
  role: "admin",
  boundary: "account.assign_plan",
  rejected: "account.rejected",
  input: z.object({ account: AccountField, plan: PlanField, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const r = await assignPlan(db, { account: input.account, planKey: input.plan, actor, reason: input.reason });
    if (!r.changed) return { message: `${r.account} is already on plan ${r.plan}: nothing changed.` };
    return {
      message: `${r.account} moved from plan ${r.previous} to ${r.plan}: the next reservation is bound by ${r.plan}'s values; what it used in the open windows stays counted.`,
      revalidate: everyPage,
    };
  },
});
