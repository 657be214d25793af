import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AuditTable } from "@/components/audit-table";
import { RefusalsTable } from "@/components/refusals-table";
import { formatCount, formatUtc } from "@/lib/format";
import { describeParts } from "@/lib/money/price";
import { ArchivedBadge, StateBadge } from "@/components/state-badge";
import { cardClass, secondaryButtonClass } from "@/components/ui";
import { UsageBar } from "@/components/usage-bar";
import { hasRole } from "@/lib/auth/roles";
import { getEndpointDetail, unitLabel } from "@/lib/ceilings";
import { DailySpendChart } from "@/components/charts/daily-spend-chart";
import { MonthToDateChart } from "@/components/charts/month-to-date-chart";
import { endpointSpendCharts } from "@/lib/spend";
import { KillSwitch } from "@/app/(dashboard)/_components/kill-switch";
import { CeilingCard } from "./_components/ceiling-card";
import { ThrottlePanel } from "./_components/throttle-panel";
import { listThrottleActivity } from "@/lib/throttle";
import { budgetsOfEndpoint } from "@/lib/budgets";
import { BudgetsCompact } from "@/components/budgets-compact";
import { BudgetStops } from "@/components/budget-stops";
import { activeRaiseEnds, listSchedules, pendingForEndpoint } from "@/lib/changes";
import { SchedulesSection } from "./_components/schedules-section";
import { PendingRequests } from "@/app/(dashboard)/changes/_components/pending-requests";
import { ReadinessCard } from "@/components/readiness-card";
import { endpointReconciliation } from "@/lib/reconciliation/read";
import { readinessOf } from "@/lib/reconciliation/readiness";
import { getProviderCap, standingSecondCapVerdict } from "@/lib/reconciliation/second-cap";
import { ReconciliationSection } from "./_components/reconciliation-section";
import { SecondCapCard } from "./_components/second-cap-card";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ key: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const { key } = await params;
  return { title: `${decodeURIComponent(key)} · Ceilings` };
}

export default async function EndpointPage({ params }: Params) {
  const staff = await requirePageRole("viewer");
  const key = decodeURIComponent((await params).key);
  const db = await getDb();
  const detail = await getEndpointDetail(db, key);
  if (!detail) notFound();
  const now = new Date();
  // Both need the endpoint's id, and nothing else from each other.
  const [throttle, spend, budgets, schedules, raiseEnds, pending, reconciliation, readiness, providerCap] = await Promise.all([
    listThrottleActivity(db, detail.id),
    endpointSpendCharts(db, { endpointId: detail.id }),
    budgetsOfEndpoint(db, { endpointId: detail.id }),
    listSchedules(db, { endpointId: detail.id }),
    activeRaiseEnds(db, { endpointId: detail.id }),
    pendingForEndpoint(db, detail.id),
    endpointReconciliation(db, { endpointId: detail.id, now }),
    readinessOf(db, { endpointIds: [detail.id], now }),
    getProviderCap(db, detail.id),
  ]);
  // Judged at the ceilings' standing values: a killed ceiling (value 0) counts at the value it keeps.
  const secondCap = standingSecondCapVerdict(providerCap, detail.ceilings, detail);
  const endpointReadiness = readiness.get(detail.id);
  const canKill = hasRole(staff.role, "operator");
  const isAdmin = hasRole(staff.role, "admin");
  const killed = detail.state === "killed";
  const archived = detail.archivedAt !== null;

  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-sm">
            <Link href="/" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
              Overview
            </Link>
          </p>
          <h1 className="break-all font-mono text-2xl font-semibold tracking-tight">{detail.key}</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">{detail.name}</p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {archived ? <ArchivedBadge /> : <StateBadge state={detail.state} />}
          {isAdmin ? (
            <Link href={`/endpoints/${encodeURIComponent(detail.key)}/edit`} className={secondaryButtonClass} data-testid="edit-endpoint">
              Edit endpoint
            </Link>
          ) : null}
          {canKill && !archived ? <KillSwitch endpointKey={detail.key} killed={killed} /> : null}
        </div>
      </div>

      {archived ? (
        <p
          role="status"
          className="rounded-md border border-zinc-300 bg-zinc-100 p-3 text-sm dark:border-zinc-700 dark:bg-zinc-800"
          data-testid="archived-banner"
        >
          Archived{detail.archivedAt ? ` on ${formatUtc(detail.archivedAt)}` : ""} by {detail.archivedBy ?? "unknown"}: every reservation is refused as{" "}
          <code className="font-mono">endpoint_archived</code> (HTTP 410) and nothing is charged. Its history, charts and refusals stay below.
        </p>
      ) : null}

      {!archived && detail.budgetStops.length > 0 ? (
        <section
          role="status"
          aria-label="Stopped by a budget"
          className="rounded-md border border-red-300 bg-red-50 p-3 dark:border-red-800 dark:bg-red-950/40"
          data-testid="budget-stops"
        >
          <BudgetStops stops={detail.budgetStops} now={now} />
        </section>
      ) : null}

      <PendingRequests requests={pending} now={now} title={`Raises of ${detail.key} waiting for a second admin`} />

      {/* The five questions first: whether this endpoint's spend is under control at all. */}
      {endpointReadiness ? <ReadinessCard readiness={endpointReadiness} /> : null}

      <section aria-labelledby="plan-title" className={`${cardClass} space-y-2 text-sm`}>
        <h2 id="plan-title" className="text-lg font-semibold">
          Plan
        </h2>
        <dl className="grid gap-x-6 gap-y-1 sm:grid-cols-[max-content_1fr]">
          <dt className="text-zinc-600 dark:text-zinc-400">Plan allowance</dt>
          <dd>
            {detail.planAllowance === null
              ? "none set"
              : `${formatCount(detail.planAllowance)} ${unitLabel(detail.unit, detail.planAllowance)} per billing month`}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Default daily ceiling</dt>
          <dd data-testid="derived-default">{detail.derivedDefault ? detail.derivedDefault.sentence : "no plan allowance to derive one from"}</dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Price</dt>
          <dd data-testid="endpoint-price">
            {describeParts(detail.parts, detail.currency, detail.unit, unitLabel(detail.unit, 1))}
            {detail.parts.length > 1 ? (
              <span className="text-zinc-600 dark:text-zinc-400"> (money from units alone is at most: every unit at the dearest part)</span>
            ) : null}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Largest single call</dt>
          <dd>
            {formatCount(detail.perCallMax)} {unitLabel(detail.unit, detail.perCallMax)}
          </dd>
        </dl>
        {detail.monthToDate ? (
          <div>
            <p className="font-medium">Month to date</p>
            <UsageBar used={detail.monthToDate.used} held={0} value={detail.monthToDate.allowance} label="Month to date against the plan allowance" />
          </div>
        ) : null}
      </section>

      <section aria-labelledby="ceilings-title" className="space-y-4">
        <h2 id="ceilings-title" className="text-lg font-semibold">
          Ceilings
        </h2>
        {!isAdmin ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Bounds and overrides are changed by admins; operators kill, restore and ask for a higher value, which a second admin approves.
          </p>
        ) : null}
        {detail.ceilings.map((c) => (
          <CeilingCard
            key={c.id}
            ceiling={c}
            unit={detail.unit}
            isAdmin={isAdmin}
            canAsk={canKill && !archived}
            overrides={detail.overrides.filter((o) => o.ceilingId === c.id)}
            planValues={detail.planValues.filter((p) => p.ceilingId === c.id)}
            topCallers={detail.topCallers[c.id] ?? []}
            raiseEnd={raiseEnds.find((r) => r.ceilingId === c.id) ?? null}
          />
        ))}
      </section>

      {archived ? null : (
        <SchedulesSection
          endpointKey={detail.key}
          schedules={schedules}
          ceilings={detail.ceilings.map((c) => ({ id: c.id, label: c.guarantee }))}
          canSchedule={canKill}
          isAdmin={isAdmin}
        />
      )}

      <section aria-labelledby="budgets-title" className="space-y-3" data-testid="endpoint-budgets">
        <h2 id="budgets-title" className="text-lg font-semibold">
          Budgets
        </h2>
        {budgets.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">This endpoint belongs to no budget: only its own ceilings bound it.</p>
        ) : (
          <>
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              Every reservation here is also charged, in money, to each of these budgets; any of them can refuse it.
            </p>
            <BudgetsCompact budgets={budgets} label={`Budgets of ${detail.key}`} />
          </>
        )}
      </section>

      {/* Throttle: soft, per caller, shown apart from the ceilings because it bounds no spend. */}
      {throttle ? (
        <section aria-labelledby="throttle-title" className="space-y-3">
          <h2 id="throttle-title" className="text-lg font-semibold">
            Throttle
          </h2>
          <ThrottlePanel activity={throttle} />
        </section>
      ) : null}

      <section aria-labelledby="charts-title" id="spend" className="space-y-4">
        <h2 id="charts-title" className="text-lg font-semibold">
          Spend over time
        </h2>
        <div className={cardClass}>
          <DailySpendChart ranges={spend.daily} />
        </div>
        <div className={cardClass}>
          <MonthToDateChart data={spend.month} />
        </div>
      </section>

      <ReconciliationSection endpointKey={detail.key} reconciliation={reconciliation} now={now} />

      <SecondCapCard endpointKey={detail.key} unit={detail.unit} currency={detail.currency} cap={providerCap} verdict={secondCap} isAdmin={isAdmin} />

      <section aria-labelledby="adjustments-title" className="space-y-3">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 id="adjustments-title" className="text-lg font-semibold">
            Recent adjustments
          </h2>
          <Link href={`/audit?endpoint=${encodeURIComponent(detail.key)}`} className="text-sm underline underline-offset-2">
            Full audit log
          </Link>
        </div>
        <AuditTable events={detail.adjustments} caption={`Recent adjustments of ${detail.key}`} />
      </section>

      <section aria-labelledby="refusals-title" className="space-y-3">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 id="refusals-title" className="text-lg font-semibold">
            Recent refusals
          </h2>
          <Link href={`/refusals?endpoint=${encodeURIComponent(detail.key)}`} className="text-sm underline underline-offset-2">
            All refusals
          </Link>
        </div>
        <RefusalsTable rows={detail.refusals} caption={`Recent refusals of ${detail.key}`} empty="No refusals recorded for this endpoint." />
      </section>
    </div>
  );
}
