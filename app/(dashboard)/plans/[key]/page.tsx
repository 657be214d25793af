import type { ReactNode } from "react";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AuditTable } from "@/components/audit-table";
import { Money } from "@/components/money";
import { cardClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { CatalogError } from "@/lib/limits/errors";
import { formatCount } from "@/lib/format";
import { listPlanEvents, readPlan, removalRaise, type PlanBudgetRow, type PlanCeilingRow, type PlanDetail } from "@/lib/plans";
import {
  AskPlanButton,
  DeletePlanForm,
  EditPlanForm,
  KeyAssignableControl,
  MakeDefaultButton,
  PlanValueForm,
  RemovePlanValueButton,
} from "../_components/plan-controls";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ key: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { key } = await params;
  return { title: `${decodeURIComponent(key)} · Plans · Ceilings` };
}

async function readOrNull(key: string): Promise<PlanDetail | null> {
  try {
    return await readPlan(await getDb(), key);
  } catch (error) {
    if (error instanceof CatalogError && error.code === "not_found") return null;
    throw error;
  }
}

export default async function PlanPage({ params }: Props) {
  const staff = await requirePageRole("viewer");
  const isAdmin = hasRole(staff.role, "admin");
  const key = decodeURIComponent((await params).key);
  const detail = await readOrNull(key);
  if (!detail) notFound();
  const { plan } = detail;
  const events = await listPlanEvents(await getDb(), plan.key);
  return (
    <div className="space-y-8">
      <div className="min-w-0">
        <p className="text-sm">
          <Link href="/plans" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
            Plans
          </Link>
        </p>
        <h1 className="break-words text-2xl font-semibold tracking-tight">
          {plan.name}
          {plan.isDefault ? (
            <span className="ml-2 rounded bg-zinc-100 px-1.5 py-0.5 align-middle text-xs font-medium dark:bg-zinc-800" data-testid="default-plan">
              default
            </span>
          ) : null}
        </h1>
        <p className="break-all font-mono text-sm text-zinc-600 dark:text-zinc-400">{plan.key}</p>
        {plan.description ? <p className="whitespace-pre-line text-sm text-zinc-700 dark:text-zinc-300">{plan.description}</p> : null}
        <p className="text-sm" data-testid="plan-accounts">
          {detail.approximate ? "About " : ""}
          {formatCount(detail.accounts)} account{detail.accounts === 1 ? "" : "s"} on this plan
          {plan.isDefault ? ", with every account not assigned a plan" : ""}.
        </p>
      </div>

      <section aria-labelledby="ceilings-title" className="space-y-3">
        <h2 id="ceilings-title" className="text-lg font-semibold">
          Per-caller ceilings
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Where the plan sets no value, the ceiling&apos;s own binds its accounts. An account&apos;s override beats both; a killed ceiling (0) refuses everyone.
        </p>
        {detail.ceilings.length === 0 ? (
          <p className="text-sm">No endpoint has a per-caller ceiling yet.</p>
        ) : (
          <ul className="space-y-3" aria-label="Per-caller ceilings">
            {detail.ceilings.map((c) => (
              <li key={c.ceilingId} className={cardClass}>
                <CeilingRow planKey={plan.key} row={c} isAdmin={isAdmin} />
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="budgets-title" className="space-y-3">
        <h2 id="budgets-title" className="text-lg font-semibold">
          Per-account budgets
        </h2>
        {detail.budgets.length === 0 ? (
          <p className="text-sm">No per-account budget yet.</p>
        ) : (
          <ul className="space-y-3" aria-label="Per-account budgets">
            {detail.budgets.map((b) => (
              <li key={b.budgetId} className={cardClass}>
                <BudgetRow planKey={plan.key} row={b} isAdmin={isAdmin} />
              </li>
            ))}
          </ul>
        )}
      </section>

      {isAdmin ? (
        <section aria-labelledby="manage-title" className={`${cardClass} space-y-4`}>
          <h2 id="manage-title" className="text-lg font-semibold">
            Manage
          </h2>
          <EditPlanForm planKey={plan.key} name={plan.name} description={plan.description} version={plan.version} />
          <div className="space-y-2" data-testid="plan-key-assignable">
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              {plan.keyAssignable
                ? "API keys with accounts:write may move accounts onto this plan, even when it loosens them (two admins allowed it)."
                : "API keys may move accounts onto this plan only when it tightens them; a looser move by key is refused (plan_not_key_assignable)."}
            </p>
            <KeyAssignableControl planKey={plan.key} keyAssignable={plan.keyAssignable} />
          </div>
          {plan.isDefault ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">This is the default plan. To delete it, make another plan the default first.</p>
          ) : (
            <div className="flex flex-wrap items-start gap-6">
              <MakeDefaultButton planKey={plan.key} />
              {/* Looser than the default in force: the direct switch is refused (approval_required); ask instead. */}
              <AskPlanButton
                kind="plan.default"
                planKey={plan.key}
                label="Ask to make default"
                title={`Ask to make ${plan.key} the default plan?`}
                description={`Every account not assigned a plan moves to ${plan.key}'s values once a second admin approves.`}
                testId={`plan-ask-default-${plan.key}`}
              />
              {detail.accounts === 0 ? (
                <DeletePlanForm planKey={plan.key} />
              ) : (
                <p className="text-sm text-zinc-600 dark:text-zinc-400">Accounts are on this plan: assign them another plan before deleting it.</p>
              )}
            </div>
          )}
        </section>
      ) : null}

      <section aria-labelledby="history-title" className="space-y-3">
        <h2 id="history-title" className="text-lg font-semibold">
          History
        </h2>
        <AuditTable events={events} caption={`Recent changes to ${plan.key}`} />
      </section>
    </div>
  );
}

function Facts({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
      {items.map(([k, v]) => (
        <div key={k} className="contents">
          <dt className="text-zinc-600 dark:text-zinc-400">{k}</dt>
          <dd className="tabular-nums">{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function CeilingRow({ planKey, row: c, isAdmin }: { planKey: string; row: PlanCeilingRow; isAdmin: boolean }) {
  const on = `${c.endpointKey} ${c.metric}/${c.window}`;
  const unit = c.metric === "calls" ? "calls" : c.unit;
  const testId = `plan-ceiling-${c.ceilingId}`;
  return (
    <div className="space-y-3" data-testid={testId}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h3 className="font-medium">
          <Link href={`/endpoints/${encodeURIComponent(c.endpointKey)}`} className="underline-offset-2 hover:underline">
            {c.endpointName}
          </Link>{" "}
          <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{on}</span>
          {c.archived ? <span className="ml-2 text-xs text-zinc-600 dark:text-zinc-400">archived endpoint</span> : null}
        </h3>
      </div>
      <Facts
        items={[
          [
            "This plan",
            c.planValue === null
              ? `none: the ceiling's own ${formatCount(c.ceilingValue)} binds`
              : c.planValue === 0
                ? "0: every account on this plan is refused here"
                : `${formatCount(c.planValue)} ${unit} per account`,
          ],
          ["Ceiling's own", c.ceilingValue === 0 ? "0 (killed: refuses everyone)" : `${formatCount(c.ceilingValue)} ${unit}`],
          ["Bounds", `${formatCount(c.min)} to ${formatCount(c.max)}`],
        ]}
      />
      {isAdmin ? (
        <div className="flex flex-wrap items-start gap-4">
          <div className="min-w-0 flex-1">
            <PlanValueForm
              planKey={planKey}
              target={{ ceilingId: c.ceilingId }}
              of={{ kind: "count" }}
              planValue={c.planValue}
              own={c.ceilingValue}
              ownBeforeKill={c.ceilingBeforeKill}
              min={c.min}
              max={c.max}
              testId={`${testId}-set`}
            />
          </div>
          {c.planValue !== null ? (
            <RemoveOrRaise planValue={c.planValue} own={c.ceilingValue} ownBeforeKill={c.ceilingBeforeKill} show={formatCount} testId={`${testId}-remove`}>
              <RemovePlanValueButton planKey={planKey} target={{ ceilingId: c.ceilingId }} on={on} testId={`${testId}-remove`} />
            </RemoveOrRaise>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function BudgetRow({ planKey, row: b, isAdmin }: { planKey: string; row: PlanBudgetRow; isAdmin: boolean }) {
  const money = (m: number) => <Money micros={m} currency={b.currency} />;
  const testId = `plan-budget-${b.budgetKey}`;
  return (
    <div className="space-y-3" data-testid={testId}>
      <h3 className="font-medium">
        <Link href={`/budgets/${encodeURIComponent(b.budgetKey)}`} className="underline-offset-2 hover:underline">
          {b.budgetName}
        </Link>{" "}
        <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{b.budgetKey}</span>
        {b.archived ? <span className="ml-2 text-xs text-zinc-600 dark:text-zinc-400">archived</span> : null}
      </h3>
      <Facts
        items={[
          [
            "This plan",
            b.planValue === null ? (
              <>none: the budget&apos;s own {money(b.budgetValue)} binds</>
            ) : b.planValue === 0 ? (
              "0: every account on this plan is refused on its members"
            ) : (
              <>{money(b.planValue)} per account</>
            ),
          ],
          ["Budget's own", b.budgetValue === 0 ? "0 (killed: refuses everyone)" : money(b.budgetValue)],
          [
            "Bounds",
            <>
              {money(b.min)} to {money(b.max)}
            </>,
          ],
        ]}
      />
      {isAdmin ? (
        <div className="flex flex-wrap items-start gap-4">
          <div className="min-w-0 flex-1">
            <PlanValueForm
              planKey={planKey}
              target={{ budget: b.budgetKey }}
              of={{ kind: "money", currency: b.currency }}
              planValue={b.planValue}
              own={b.budgetValue}
              ownBeforeKill={b.budgetBeforeKill}
              min={b.min}
              max={b.max}
              testId={`${testId}-set`}
            />
          </div>
          {b.planValue !== null ? (
            <RemoveOrRaise planValue={b.planValue} own={b.budgetValue} ownBeforeKill={b.budgetBeforeKill} show={money} testId={`${testId}-remove`}>
              <RemovePlanValueButton planKey={planKey} target={{ budget: b.budgetKey }} on={`budget ${b.budgetKey}`} testId={`${testId}-remove`} />
            </RemoveOrRaise>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/**
 * The remove button, unless removing is a raise of 5x or more (the own value over the plan's): then
 * it says so, and the raise is made by setting the own value above, which asks for it twice.
 */
function RemoveOrRaise(p: {
  planValue: number;
  own: number;
  ownBeforeKill: number | null;
  show: (v: number) => ReactNode;
  testId: string;
  children: ReactNode;
}) {
  const raise = removalRaise(p.planValue, p.own, p.ownBeforeKill);
  if (!raise.needsConfirmation) return <>{p.children}</>;
  return (
    <p className="max-w-xs text-xs text-zinc-600 dark:text-zinc-400" data-testid={`${p.testId}-raise`}>
      Removing this value raises the plan&apos;s accounts from {p.show(p.planValue)} to {p.show(raise.to)}, 5× or more: set {p.show(raise.to)} above (typed
      twice), or run <code>plans unset … --confirm</code>.
    </p>
  );
}
