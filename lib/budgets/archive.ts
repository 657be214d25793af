import type { Db } from "@/db/client";
import type { Budget } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { CatalogError, requireCatalogReason } from "@/lib/limits/errors";
import { requireApproval, type ChangeControl } from "@/lib/control/context";
import { BUDGET_RE_ADD_WINDOW_HOURS, looserRecentBudget } from "./re-add";
import { type BudgetChange, lockedBudget, recordBudgetChange, saveBudget } from "./write";

export type ArchiveBudgetParams = { key: string; archived: boolean; actor: AuditActor; reason: string; changeControl?: ChangeControl };
/** Archived: it charges and refuses nothing from the next batch on; its history stays. */
export async function setBudgetArchived(db: Db, p: ArchiveBudgetParams): Promise<void> {
  const reason = requireCatalogReason(p.reason);
  await db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    if ((budget.archivedAt !== null) === p.archived)
      throw new CatalogError("unchanged", `${budget.key} is already ${p.archived ? "archived" : "live (not archived)"}`);
    await archiveLocked({ tx, actor: p.actor, reason, changeControl: p.changeControl }, budget, p.archived);
  });
}

export async function archiveLocked(p: BudgetChange, budget: Budget, archived: boolean): Promise<void> {
  // The rules make every unarchive a second admin's decision (docs/change-control.md), though an
  // archived budget limits nothing: kept as one rule for endpoints and budgets.
  if (!archived) requireApproval(p.changeControl, `unarchiving budget ${budget.key}`, { kind: "budget.unarchive", change: { budgetKey: budget.key } });
  // Archived while a looser budget created in the last 24 hours shares its members: that one takes its place (re-add.ts).
  const looser = archived ? await looserRecentBudget(p.tx, budget) : null;
  if (looser !== null) {
    requireApproval(
      p.changeControl,
      `archiving budget ${budget.key} while budget ${looser}, created in the last ${BUDGET_RE_ADD_WINDOW_HOURS} hours over the same members, lets more through`,
      {
        kind: "budget.archive",
        change: { budgetKey: budget.key },
      },
    );
  }
  await saveBudget(p.tx, budget.id, { archivedAt: archived ? new Date() : null, archivedBy: archived ? actorName(p.actor) : null });
  await recordBudgetChange(p, budget, { action: archived ? "budget.archive" : "budget.unarchive", details: {} });
}
