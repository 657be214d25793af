// The door to plans: a customer tier's own values on per-caller ceilings and per-account budgets.
// What the dashboard, the CLI, the catalog file and tests call; enforcement reads the same tables.
export {
  createPlan,
  deletePlan,
  setDefaultPlan,
  setPlanKeyAssignable,
  updatePlan,
  type CreatePlanParams,
  type PlanFieldChange,
  type PlanKeyAssignableParams,
  type PlanVerbParams,
  type UpdatePlanParams,
} from "./change";
export { accountsLoosening, planLoosening, type Loosening } from "@/lib/limits/loosening";
export { clampPlanValues, type PlanValuesLimit } from "@/lib/limits/plan-values";
export { parsePlanValue, previewPlanValue, type PlanValueKind, type PlanValuePreview } from "./preview";
export { listPlanEvents, listPlans, readPlan, type PlanBudgetRow, type PlanCeilingRow, type PlanDetail, type PlanSummary } from "./read";
export { PlanKey, PlanSpec, type PlanSpecInput } from "./spec";
export {
  removalRaise,
  removePlanValue,
  setPlanValue,
  type PlanTarget,
  type PlanValueResult,
  type RemovePlanValueParams,
  type SetPlanValueParams,
} from "./values";

/** A plan named by its key, as the accounts verbs take it. */
export type PlanRef = { key: string };
