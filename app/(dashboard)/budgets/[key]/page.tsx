import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AuditTable } from "@/components/audit-table";
import { BudgetStateBadge } from "@/components/budget-state-badge";
import { BudgetLimitWords, BudgetWindow, windowLabel } from "@/components/budget-window";
import { BudgetSpendChart } from "@/components/charts/budget-spend-chart";
import { Money } from "@/components/money";
import { RefusalsTable } from "@/components/refusals-table";
import { cardClass, secondaryButtonClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { readBudgetDetail } from "@/lib/budgets";
import { formatMoneyText } from "@/lib/format";
import { KeysetCursor } from "@/lib/keyset";
import { firstValues } from "@/lib/search-params";
import { AdjustBudgetForm, BudgetKillButton } from "../_components/budget-controls";
import { AccountsTable, AlertsList, MembersTable, OverridesTable } from "../_components/budget-tables";
import { ExactSpend } from "../_components/exact-spend";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ key: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Pick<Props, "params">): Promise<Metadata> {
  const { key } = await params;
  return { title: `${decodeURIComponent(key)} · Budgets · Ceilings` };
}

export default async function BudgetPage({ params, searchParams }: Props) {
  const staff = await requirePageRole("viewer");
  const canKill = hasRole(staff.role, "operator");
  const isAdmin = hasRole(staff.role, "admin");
  const key = decodeURIComponent((await params).key);
  const raw = firstValues(await searchParams);
  // A broken cursor (an old or hand-edited link) shows the newest refusals and says so.
  const cursor = raw.refusals_before ? KeysetCursor.safeParse(raw.refusals_before) : null;
  const now = new Date();
  const b = await readBudgetDetail(await getDb(), { key, now, refusalsBefore: cursor?.success ? cursor.data : undefined });
  if (!b) notFound();
  const path = `/budgets/${encodeURIComponent(b.key)}`;
  const perAccount = b.scope === "account";
  const money = (n: number) => <Money micros={n} currency={b.currency} />;

  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-sm">
            <Link href="/budgets" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
              Budgets
            </Link>
          </p>
          <h1 className="break-words text-2xl font-semibold tracking-tight">{b.name}</h1>
          <p className="break-all font-mono text-sm text-zinc-600 dark:text-zinc-400">{b.key}</p>
          <p className="break-words text-sm text-zinc-700 dark:text-zinc-300" data-testid="budget-sentence">
            <BudgetLimitWords budget={b} /> across {b.members.map((m) => m.key).join(", ") || "no endpoint"}
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <BudgetStateBadge state={b.state} crossed={b.crossed} />
          {isAdmin ? (
            <Link href={`${path}/edit`} className={secondaryButtonClass} data-testid="edit-budget">
              Edit budget
            </Link>
          ) : null}
        </div>
      </div>

      {/* The write side's controls; each action checks its role itself. Overrides and archive are on the edit page. */}
      {canKill || isAdmin ? (
        <section aria-label="Budget controls" data-testid="budget-controls-slot" className={`${cardClass} space-y-3`}>
          {canKill && b.archivedAt === null ? (
            <AdjustBudgetForm
              budgetKey={b.key}
              value={b.value}
              valueBeforeKill={b.valueBeforeKill}
              min={b.minValue}
              max={b.maxValue}
              defaultValue={b.defaultValue}
              currency={b.currency}
              version={b.version}
              isAdmin={isAdmin}
            />
          ) : null}
          {b.archivedAt === null ? (
            <BudgetKillButton budgetKey={b.key} killed={b.value === 0} restoresTo={formatMoneyText(b.valueBeforeKill ?? b.defaultValue, b.currency)} />
          ) : null}
        </section>
      ) : null}

      <section aria-labelledby="now-title" className={`${cardClass} space-y-3`}>
        <h2 id="now-title" className="text-lg font-semibold">
          This {windowLabel(b.window)}
        </h2>
        {/* The top accounts are tables further down, with the 90 days beside them. */}
        <BudgetWindow budget={b} now={now} showAccounts={false} />
        <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="text-zinc-600 dark:text-zinc-400">Exact</dt>
          <dd>
            <ExactSpend budget={b} />
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Bounds</dt>
          <dd>
            {money(b.minValue)} to {money(b.maxValue)}, default {money(b.defaultValue)}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Alerts at</dt>
          <dd>{b.alertThresholds.length === 0 ? "no thresholds" : b.alertThresholds.map((t) => `${t}%`).join(", ")}</dd>
          {b.window === "billing_month" ? (
            <>
              <dt className="text-zinc-600 dark:text-zinc-400">Billing day</dt>
              <dd>{b.billingDay}</dd>
            </>
          ) : null}
        </dl>
      </section>

      <section aria-labelledby="history-title" className="space-y-3" id="spend">
        <h2 id="history-title" className="text-lg font-semibold">
          Spend over time
        </h2>
        <div className={cardClass}>
          <BudgetSpendChart
            ranges={{ 30: b.history[30].windows.map(point), 90: b.history[90].windows.map(point) }}
            value={b.value}
            currency={b.currency}
            perAccount={perAccount}
            windowLabel={windowLabel(b.window)}
          />
        </div>
      </section>

      <section aria-labelledby="members-title" className="space-y-3">
        <h2 id="members-title" className="text-lg font-semibold">
          Members
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Shares of this window from each member&apos;s reservations in it: the worst case while held or expired, the actual once settled.
        </p>
        <MembersTable members={b.members} currency={b.currency} />
      </section>

      {perAccount ? (
        <section aria-labelledby="accounts-title" className="space-y-4">
          <h2 id="accounts-title" className="text-lg font-semibold">
            Top accounts
          </h2>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">The value, {money(b.value)}, is each account&apos;s own unless an override says otherwise.</p>
          <div className="grid gap-4 lg:grid-cols-2">
            <AccountsTable
              caption={`Settled most this ${windowLabel(b.window)}`}
              currency={b.currency}
              rows={b.topAccounts.map((a) => ({
                account: a.account,
                spend: a.spend,
                detail: a.value === 0 ? "blocked (override 0)" : <>of {money(a.value)}</>,
              }))}
              testId="top-accounts-now"
            />
            <AccountsTable
              caption="Settled most over 90 days"
              currency={b.currency}
              rows={b.topAccounts90.accounts.map((a) => ({
                account: a.account,
                spend: a.settled,
                detail: `in ${a.windows} ${windowLabel(b.window)}${a.windows === 1 ? "" : "s"}`,
              }))}
              testId="top-accounts-90"
            />
          </div>
          <OverridesTable overrides={b.overrides} currency={b.currency} />
        </section>
      ) : null}

      <section aria-labelledby="adjustments-title" className="space-y-3">
        <h2 id="adjustments-title" className="text-lg font-semibold">
          Adjustments
        </h2>
        <AuditTable events={b.adjustments} caption={`Recent adjustments of ${b.key}`} />
      </section>

      <section aria-labelledby="alerts-title" className="space-y-3">
        <h2 id="alerts-title" className="text-lg font-semibold">
          Alerts
        </h2>
        <AlertsList alerts={b.alerts} />
      </section>

      <section aria-labelledby="refusals-title" className="space-y-3" id="refusals">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 id="refusals-title" className="text-lg font-semibold">
            Refusals
          </h2>
          <Link href="/refusals?gate=budget" className="text-sm underline underline-offset-2">
            Every budget&apos;s refusals
          </Link>
        </div>
        {cursor && !cursor.success ? (
          <p role="alert" className="text-sm text-red-800 dark:text-red-300">
            That page link is not valid; showing the newest refusals.
          </p>
        ) : null}
        <RefusalsTable
          rows={b.refusals.rows}
          caption={`Refusals by ${b.key}, newest first`}
          empty="This budget has refused nothing."
          budgetCurrency={b.currency}
        />
        <div className="flex flex-wrap gap-2">
          {raw.refusals_before ? (
            <Link href={`${path}#refusals`} className={secondaryButtonClass} data-testid="budget-refusals-newest">
              Newest
            </Link>
          ) : null}
          {b.refusals.older ? (
            <Link
              href={`${path}?refusals_before=${encodeURIComponent(b.refusals.older)}#refusals`}
              className={secondaryButtonClass}
              data-testid="budget-refusals-older"
            >
              Older
            </Link>
          ) : null}
        </div>
      </section>
    </div>
  );
}

function point(w: { day: string; spend: number; busiest: number; accounts: number; value: number }) {
  return { day: w.day, spend: w.spend, busiest: w.busiest, accounts: w.accounts, value: w.value };
}
