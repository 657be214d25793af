import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AutoRefresh } from "@/components/auto-refresh";
import { BudgetStateBadge } from "@/components/budget-state-badge";
import { BudgetLimitWords, BudgetLink, BudgetWindow } from "@/components/budget-window";
import { buttonClass, cardClass, secondaryButtonClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { listBudgets, type BudgetOverview } from "@/lib/budgets";
import { formatMoneyText } from "@/lib/format";
import { BudgetKillButton } from "./_components/budget-controls";

export const metadata: Metadata = { title: "Budgets · Ceilings" };
export const dynamic = "force-dynamic";

export default async function BudgetsPage() {
  const staff = await requirePageRole("viewer");
  const now = new Date();
  const budgets = await listBudgets(await getDb(), { now });
  const isAdmin = hasRole(staff.role, "admin");
  const canKill = hasRole(staff.role, "operator");
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight">Budgets</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Hard limits in money across several endpoints: each budget&apos;s spend in its open window, its members&apos; shares, pace and projection. Killed
            and alerting first.
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <AutoRefresh />
          {isAdmin ? (
            <Link href="/budgets/new" className={secondaryButtonClass} data-testid="new-budget">
              New budget
            </Link>
          ) : null}
        </div>
      </div>
      {budgets.length === 0 ? (
        <NoBudgets isAdmin={isAdmin} />
      ) : (
        <ul className="grid gap-4 lg:grid-cols-2" aria-label="Budgets">
          {budgets.map((b) => (
            <li key={b.id} className="min-w-0">
              <BudgetCard budget={b} now={now} canKill={canKill} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function NoBudgets({ isAdmin }: { isAdmin: boolean }) {
  return (
    <section className={`${cardClass} space-y-3`} data-testid="no-budgets">
      <h2 className="text-base font-semibold">No budgets yet</h2>
      <p className="text-sm">
        A budget holds several endpoints to one limit in money (&quot;at most $200.00 a day across every LLM endpoint&quot;), for everyone together or for each
        billing account. Every reservation on a member is charged to it in the same step as the endpoint&apos;s own ceilings.
      </p>
      {isAdmin ? (
        <p>
          <Link href="/budgets/new" className={buttonClass} data-testid="empty-new-budget">
            New budget
          </Link>
        </p>
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">An admin can add budgets.</p>
      )}
    </section>
  );
}

function BudgetCard({ budget: b, now, canKill }: { budget: BudgetOverview; now: Date; canKill: boolean }) {
  return (
    <article
      aria-labelledby={`budget-${b.id}`}
      data-testid={`budget-${b.key}`}
      className={`${cardClass} min-w-0 space-y-3 ${b.state === "killed" ? "border-red-400 dark:border-red-700" : ""}`}
    >
      <header className="flex flex-wrap items-start justify-between gap-2">
        <div className="min-w-0">
          <h2 id={`budget-${b.id}`} className="text-base font-semibold">
            <BudgetLink budget={b} />
          </h2>
          <p className="break-all font-mono text-xs text-zinc-600 dark:text-zinc-400">{b.key}</p>
          <p className="text-sm text-zinc-700 dark:text-zinc-300">
            <BudgetLimitWords budget={b} /> across {b.members.length} endpoint{b.members.length === 1 ? "" : "s"}
          </p>
        </div>
        <BudgetStateBadge state={b.state} crossed={b.crossed} />
      </header>
      <BudgetWindow budget={b} now={now} />
      {canKill && b.archivedAt === null ? (
        <footer className="flex flex-wrap gap-2">
          <BudgetKillButton budgetKey={b.key} killed={b.value === 0} restoresTo={formatMoneyText(b.valueBeforeKill ?? b.defaultValue, b.currency)} />
        </footer>
      ) : null}
    </article>
  );
}
