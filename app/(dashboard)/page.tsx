import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AutoRefresh } from "@/components/auto-refresh";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { formatAgo, formatCount, formatPercent } from "@/lib/format";
import { ArchivedBadge, StateBadge } from "@/components/state-badge";
import { buttonClass, cardClass, secondaryButtonClass } from "@/components/ui";
import { UsageBar } from "@/components/usage-bar";
import { hasRole } from "@/lib/auth/roles";
import { type DatabaseStatus, probeDatabase } from "@/lib/database-status";
import { listEndpointsOverview, unitLabel, type EndpointOverview } from "@/lib/ceilings";
import { SpendSparkline } from "@/components/charts/spend-sparkline";
import { overviewTrends, type EndpointTrend } from "@/lib/spend";
import { listBudgetSummaries } from "@/lib/budgets";
import { BudgetsCompact } from "@/components/budgets-compact";
import { BudgetStops } from "@/components/budget-stops";
import { runAction } from "@/app/(dashboard)/actions";
import { KillSwitch } from "./_components/kill-switch";
import { pendingChangeRequests, unacknowledgedBreakGlass } from "@/lib/changes";
import { PendingRequests, UnacknowledgedBreakGlass } from "./changes/_components/pending-requests";
import { ReadinessBadge } from "@/components/readiness-card";
import { readinessOf } from "@/lib/reconciliation/readiness";
import type { Readiness } from "@/lib/reconciliation/types";

const killAllAction = runAction.bind(null, "ceiling.kill_all");

export const metadata: Metadata = { title: "Overview · Ceilings" };
export const dynamic = "force-dynamic";

export default async function OverviewPage() {
  const staff = await requirePageRole("viewer");
  const now = new Date();
  const db = await getDb();
  const [budgets, endpoints, trends, database, pending, brokenGlass, readiness] = await Promise.all([
    listBudgetSummaries(db, { now }),
    listEndpointsOverview(db, now),
    overviewTrends(db, { now }),
    probeDatabase(db),
    pendingChangeRequests(db, now),
    unacknowledgedBreakGlass(db),
    // Every endpoint's five answers in a fixed number of statements, however many endpoints.
    readinessOf(db, { now }),
  ]);
  const canKill = hasRole(staff.role, "operator");
  const isAdmin = hasRole(staff.role, "admin");
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">Overview</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">Spend in each open window against its ceiling; killed and fullest first.</p>
          <p className="text-xs text-zinc-500" data-testid="database-node">
            {describeDatabase(database)}
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <AutoRefresh />
          {isAdmin ? (
            <Link href="/endpoints/new" className={secondaryButtonClass} data-testid="new-endpoint">
              New endpoint
            </Link>
          ) : null}
          {canKill && endpoints.length > 0 ? (
            <ConfirmActionButton
              action={killAllAction}
              label="Kill all"
              title="Kill every endpoint?"
              description="Every ceiling of every endpoint is set to 0 and every call is refused. Each endpoint can then be restored on its own, to its value from before the kill."
              confirmLabel="Kill all endpoints"
              fields={{}}
              reason="optional"
              tone="danger"
              testId="kill-all"
            />
          ) : null}
        </div>
      </div>
      {/* A raise applied alone, and raises waiting for a second admin, before anything else. */}
      <UnacknowledgedBreakGlass requests={brokenGlass} viewerId={staff.id} isAdmin={isAdmin} />
      <PendingRequests requests={pending} now={now} />
      {/* Budgets lead: they bound the bill across endpoints. Nothing at all when there are none. */}
      {budgets.length > 0 ? (
        <section aria-labelledby="overview-budgets-title" className="space-y-3" data-testid="overview-budgets">
          <div className="flex flex-wrap items-baseline justify-between gap-2">
            <h2 id="overview-budgets-title" className="text-lg font-semibold">
              Budgets
            </h2>
            <Link href="/budgets" className="text-sm underline underline-offset-2">
              All budgets
            </Link>
          </div>
          <BudgetsCompact budgets={budgets} label="Budgets" />
        </section>
      ) : null}
      {endpoints.length === 0 ? (
        <EmptyCatalog isAdmin={isAdmin} />
      ) : (
        <ul className="grid gap-4 lg:grid-cols-2" aria-label="Endpoints">
          {endpoints.map((e) => (
            <li key={e.id}>
              <EndpointCard endpoint={e} canKill={canKill} now={now} trend={trends.get(e.id)} readiness={readiness.get(e.id)} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A fresh installation: no endpoint is under a ceiling yet, and what to do about it. */
function EmptyCatalog({ isAdmin }: { isAdmin: boolean }) {
  return (
    <section className={`${cardClass} space-y-3`} data-testid="empty-catalog">
      <h2 className="text-base font-semibold">No endpoints yet</h2>
      <p className="text-sm">
        Nothing is under a ceiling: put each endpoint whose success costs money (an email, an SMS, an LLM call) in the catalog, with its plan and at least one
        global ceiling, and services can reserve against it at once.
      </p>
      {isAdmin ? (
        <p>
          <Link href="/endpoints/new" className={buttonClass} data-testid="empty-new-endpoint">
            New endpoint
          </Link>
        </p>
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">An admin can add endpoints.</p>
      )}
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Or as a reviewed file: <code className="font-mono">npm run ceilings -- plan ceilings.json</code>, then{" "}
        <code className="font-mono">npm run ceilings -- apply ceilings.json --reason &quot;…&quot;</code> (the README has the format).
      </p>
    </section>
  );
}

type CardProps = { endpoint: EndpointOverview; canKill: boolean; now: Date; trend?: EndpointTrend; readiness?: Readiness };

function EndpointCard({ endpoint: e, canKill, now, trend, readiness }: CardProps) {
  const killed = e.state === "killed";
  const stopped = e.state === "stopped";
  const archived = e.archivedAt !== null;
  return (
    <article
      aria-labelledby={`ep-${e.id}`}
      data-testid={`endpoint-${e.key}`}
      className={`${cardClass} space-y-4 ${killed || stopped ? "border-red-400 dark:border-red-700" : ""}`}
    >
      <header className="flex flex-wrap items-start justify-between gap-2">
        <div className="min-w-0">
          <h2 id={`ep-${e.id}`} className="text-base font-semibold">
            <Link href={`/endpoints/${encodeURIComponent(e.key)}`} className="font-mono underline-offset-2 hover:underline">
              {e.key}
            </Link>
          </h2>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">{e.name}</p>
        </div>
        {archived ? <ArchivedBadge /> : <StateBadge state={e.state} />}
      </header>
      {archived ? null : <ReadinessBadge readiness={readiness} href={`/endpoints/${encodeURIComponent(e.key)}#readiness`} />}
      {trend ? <SpendSparkline trend={trend} /> : null}
      {killed ? (
        <p className="text-sm text-red-800 dark:text-red-300">
          Killed {e.killedAt ? formatAgo(e.killedAt, now) : ""} by {e.killedBy ?? "unknown"}: every call is refused.
        </p>
      ) : null}
      {archived ? null : <BudgetStops stops={e.budgetStops} now={now} />}
      <ul className="space-y-3">
        {e.ceilings.map((c) => (
          <li key={c.id} className="text-sm">
            <div className="flex flex-wrap items-baseline justify-between gap-x-2">
              <span className="font-medium">{c.guarantee}</span>
              {c.state === "near_limit" ? (
                <span className="text-xs font-semibold text-amber-800 dark:text-amber-300">{formatPercent(c.ratio)} used</span>
              ) : null}
            </div>
            {c.scope === "destination" ? (
              <p className="text-xs text-zinc-600 dark:text-zinc-400">{formatCount(c.scopes)} in cooldown now</p>
            ) : c.value === 0 ? (
              <p className="text-xs text-zinc-600 dark:text-zinc-400">
                Restore puts back {c.valueBeforeKill === null ? "its default" : formatCount(c.valueBeforeKill)}
              </p>
            ) : (
              <>
                <UsageBar used={c.used} held={c.held} value={c.value} label={c.guarantee} />
                {c.scope === "caller" ? (
                  <p className="text-xs text-zinc-600 dark:text-zinc-400">
                    Busiest account shown; {formatCount(c.scopes)} account(s) in this window, {formatCount(c.totalUsed + c.totalHeld)} in all
                  </p>
                ) : null}
              </>
            )}
          </li>
        ))}
      </ul>
      {e.monthToDate ? (
        <div className="text-sm">
          <p className="font-medium">Month to date against the plan allowance</p>
          <UsageBar used={e.monthToDate.used} held={0} value={e.monthToDate.allowance} label="Month to date" />
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            Even pace by now: {formatCount(e.monthToDate.pace)} {unitLabel(e.unit, e.monthToDate.pace)};{" "}
            {e.monthToDate.used > e.monthToDate.pace ? "spending ahead of the plan" : "within the plan"}
          </p>
        </div>
      ) : null}
      {canKill && !archived ? (
        <footer className="flex flex-wrap gap-2">
          <KillSwitch endpointKey={e.key} killed={killed} named />
        </footer>
      ) : null}
    </article>
  );
}

/** Which node serves the dashboard: on a Patroni cluster it changes with every failover. */
function describeDatabase(database: DatabaseStatus): string {
  if (!database.ok) return `Database: not answering (${database.message})`;
  return database.server === "local" ? `Database: ${database.role}, local` : `Database: ${database.role} at ${database.server}`;
}
