// The door to accounts: a billing account's plan (assigned one by one or in bulk), its block, and
// how it binds. H3's reads of the dashboard's account page live beside these (read*.ts).
export {
  assignPlan,
  assignPlans,
  lockPlans,
  recordRefusedAssignment,
  refuseTooMany,
  type AssignmentRow,
  type AssignPlanParams,
  type AssignPlanResult,
  type AssignPlansParams,
  type AssignPlansResult,
} from "./assign";
export { blockAccount, unblockAccount, type BlockParams, type BlockResult, type UnblockParams, type UnblockResult } from "./block";
export { AccountError, MAX_NAMED_ROWS, type AccountErrorCode, type RowProblem } from "./errors";
export { parseAssignmentFile, type AssignmentFile } from "./file";
export { MAX_BULK_ROWS, parseAccountId, parsePlanKey } from "./parse";
export { getAccount, type AccountView, type BindingSource, type BudgetBinding, type CeilingBinding } from "./show";
export { lockAccounts } from "@/lib/limits/lock-accounts";
