import type { Db } from "@/db/client";
import type { Alert, AuditEvent } from "@/db/schema";
import type { OverrideRow } from "@/lib/limits/overrides";
import type { KeysetCursor } from "@/lib/keyset";
import { topAccountsOver, type TopAccountsOver } from "./read-accounts";
import { budgetHistory, windowsBack, type BudgetHistory, type HistoryRange } from "./read-history";
import { listBudgetAdjustments, listBudgetAlerts, listBudgetOverrides, listBudgetRefusals, type BudgetRefusalPage } from "./read-log";
import { readBudgetOverview, type BudgetOverview } from "./read-window";

/** Accounts listed on a budget's page, in the open window and over 90 days. */
export const DETAIL_TOP_ACCOUNTS = 10;

export type BudgetDetail = BudgetOverview & {
  history: Record<HistoryRange, BudgetHistory>;
  /** The accounts that settled most over the last 90 days (per-account budgets; none for global ones). */
  topAccounts90: TopAccountsOver;
  overrides: { rows: OverrideRow[]; total: number };
  adjustments: AuditEvent[];
  refusals: BudgetRefusalPage;
  alerts: Alert[];
};

/** Everything a budget's page shows, or null for an unknown key. `refusalsBefore` pages its refusals. */
export async function readBudgetDetail(db: Db, p: { key: string; now?: Date; refusalsBefore?: KeysetCursor }): Promise<BudgetDetail | null> {
  const now = p.now ?? new Date();
  const overview = await readBudgetOverview(db, { key: p.key, now, topAccounts: DETAIL_TOP_ACCOUNTS });
  if (!overview) return null;
  const starts = windowsBack(overview, now, 90).map((w) => w.start);
  const [history, topAccounts90, overrides, adjustments, refusals, alerts] = await Promise.all([
    budgetHistory(db, overview, now),
    overview.scope === "account"
      ? topAccountsOver(db, { budgetId: overview.id, starts, limit: DETAIL_TOP_ACCOUNTS })
      : Promise.resolve<TopAccountsOver>({ accounts: [], read: "window tops" }),
    listBudgetOverrides(db, { budgetId: overview.id }),
    listBudgetAdjustments(db, { key: overview.key }),
    listBudgetRefusals(db, { budgetId: overview.id, before: p.refusalsBefore }),
    listBudgetAlerts(db, { budgetId: overview.id }),
  ]);
  return { ...overview, history, topAccounts90, overrides, adjustments, refusals, alerts };
}
