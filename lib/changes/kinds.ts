import { endpointBillingDay } from "./billing-day-kind";
import { budgetArchive, budgetCreate, budgetMembers, budgetUnarchive } from "./budget-kinds";
import { ceilingAdd, endpointUnarchive, perCallMax } from "./ceiling-kinds";
import { budgetBounds, budgetValue, ceilingBounds, ceilingValue } from "./limit-kinds";
import { budgetOverride, ceilingOverride } from "./override-kinds";
import { accountPlan, accountUnblock, planDefault, planKeyAssignable, planValue } from "./plan-kinds";
import type { KindHandler } from "./prepared";
import { endpointPrices } from "./price-kind";
import { schedule } from "./schedule-kind";
import type { ChangeKind } from "./types";

/** Each kind's prepare (when asked) and apply (when approved or broken glass on). */
export const kindHandlers: Record<ChangeKind, KindHandler> = {
  "ceiling.value": ceilingValue,
  "ceiling.bounds": ceilingBounds,
  "ceiling.add": ceilingAdd,
  "endpoint.per_call_max": perCallMax,
  "endpoint.unarchive": endpointUnarchive,
  "budget.value": budgetValue,
  "budget.bounds": budgetBounds,
  "budget.unarchive": budgetUnarchive,
  "budget.create": budgetCreate,
  "budget.members": budgetMembers,
  "budget.archive": budgetArchive,
  "endpoint.prices": endpointPrices,
  "endpoint.billing_day": endpointBillingDay,
  schedule,
  "plan.value": planValue,
  "plan.default": planDefault,
  "plan.key_assignable": planKeyAssignable,
  "account.plan": accountPlan,
  "account.unblock": accountUnblock,
  "ceiling.override": ceilingOverride,
  "budget.override": budgetOverride,
};
