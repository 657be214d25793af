// Change control: lowering spend takes one person, raising it takes two. Each kind of raise is
// asked as a change request with what it changes (`change`) and what was in force when it was
// asked (`before`); approval compares `before` with what is in force then, under the same locks as
// the direct edit, and applies it through the same write code.

export const changeKinds = [
  "ceiling.value", //        change { ceilingId, value }            before { value, valueBeforeKill }
  "ceiling.bounds", //       change { ceilingId, min, max }         before { min, max, value }
  "ceiling.add", //          change { endpointKey, ceiling: <CeilingSpec input> } before { identities }
  "endpoint.per_call_max", // change { endpointKey, perCallMax }    before { perCallMax }
  "endpoint.unarchive", //   change { endpointKey }                 before { archived: true }
  "budget.value", //         change { budgetKey, value }            before { value, valueBeforeKill }
  "budget.bounds", //        change { budgetKey, min, max }         before { min, max, value }
  "budget.unarchive", //     change { budgetKey }                   before { archived: true }
  "budget.create", //        change { spec: <BudgetSpec input> }    before { exists: false }
  "budget.members", //       change { budgetKey, members }          before { members, archived }
  "budget.archive", //       change { budgetKey }                   before { archived: false, looser }
  "endpoint.prices", //      change { endpointKey, parts }          before { parts }
  "endpoint.billing_day", // change { endpointKey, billingDay }     before { billingDay }
  "schedule", //             change { scheduleId }                  before { state: "awaiting_approval" }
  "plan.value", //           change { planKey, ceilingId | budgetKey, value | null } before { value, own, min, max }
  "plan.default", //         change { planKey }                     before { default }
  "plan.key_assignable", //  change { planKey }                     before { keyAssignable: false }
  "account.plan", //         change { rows: [{ account, plan }] }   before { plans: { account: key | null }, versions }
  "account.unblock", //      change { account }                     before { blockedAt, blockedBy }
  "ceiling.override", //     change { ceilingId, caller, value | null } before { override, plan }
  "budget.override", //      change { budgetKey, caller, value | null } before { override, plan }
] as const;
export type ChangeKind = (typeof changeKinds)[number];

export function isChangeKind(value: unknown): value is ChangeKind {
  return typeof value === "string" && (changeKinds as readonly string[]).includes(value);
}

export const changeKindLabels: Record<ChangeKind, string> = {
  "ceiling.value": "Ceiling value",
  "ceiling.bounds": "Ceiling bounds",
  "ceiling.add": "New ceiling",
  "endpoint.per_call_max": "Per-call max",
  "endpoint.unarchive": "Unarchive endpoint",
  "budget.value": "Budget value",
  "budget.bounds": "Budget bounds",
  "budget.unarchive": "Unarchive budget",
  "budget.create": "New budget",
  "budget.members": "Budget members",
  "budget.archive": "Archive budget",
  "endpoint.prices": "Part prices",
  "endpoint.billing_day": "Billing day",
  schedule: "Scheduled change",
  "plan.value": "Plan value",
  "plan.default": "Default plan",
  "plan.key_assignable": "Plan assignable by key",
  "account.plan": "Account plan",
  "account.unblock": "Unblock account",
  "ceiling.override": "Account override",
  "budget.override": "Account budget override",
};
