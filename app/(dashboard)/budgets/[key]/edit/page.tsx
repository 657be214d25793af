import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { Money } from "@/components/money";
import { cardClass } from "@/components/ui";
import { budgetSentenceOf, type CatalogBudget, listMemberOptions, looserRecentBudget, moneyInputText, readBudget } from "@/lib/budgets";
import { CatalogError } from "@/lib/limits/errors";
import { formatMoneyText } from "@/lib/format";
import { AdjustBudgetForm, BudgetArchiveButton, BudgetKillButton, BudgetOverrideForm, RemoveBudgetOverrideButton } from "../../_components/budget-controls";
import { EditBudgetForm, type EditBudgetInitial } from "../../_components/budget-form";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ key: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `Edit budget ${decodeURIComponent((await params).key)} · Ceilings` };
}

async function load(key: string): Promise<[CatalogBudget, Awaited<ReturnType<typeof listMemberOptions>>, string | null] | null> {
  const db = await getDb();
  try {
    const [b, options] = await Promise.all([readBudget(db, key), listMemberOptions(db)]);
    // Whether archiving it is a raise: the archive form then asks (lib/budgets/re-add.ts).
    return [b, options, b.budget.archivedAt === null ? await looserRecentBudget(db, b.budget) : null];
  } catch (error) {
    if (error instanceof CatalogError && error.code === "not_found") return null;
    throw error;
  }
}

export default async function EditBudgetPage({ params }: Params) {
  await requirePageRole("admin");
  const key = decodeURIComponent((await params).key);
  const found = await load(key);
  if (!found) notFound();
  const [b, options, looser] = found;
  const { budget, spec } = b;
  const killed = budget.value === 0;
  const archived = budget.archivedAt !== null;
  const initial: EditBudgetInitial = {
    key,
    name: spec.name,
    currency: spec.currency,
    scope: spec.scope,
    window: spec.window,
    billingDay: String(spec.billingDay),
    value: moneyInputText(budget.value),
    valueMicros: budget.value,
    min: moneyInputText(spec.min),
    max: moneyInputText(spec.max),
    default: moneyInputText(spec.default),
    alertThresholds: spec.alertThresholds.join(", "),
    members: spec.members,
    version: budget.version,
  };
  return (
    <div className="space-y-8">
      <div>
        <p className="text-sm">
          <Link href={`/budgets/${encodeURIComponent(key)}`} className="underline underline-offset-2">
            {key}
          </Link>
        </p>
        <h1 className="break-all text-2xl font-semibold tracking-tight">
          Edit budget <span className="font-mono">{key}</span>
        </h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="budget-guarantee">
          {budgetSentenceOf(b)}. Every change waits for reservations in flight on its members, binds the next one, and is one audit event. Its key, currency,
          scope ({spec.scope}) and window ({spec.window}) never change: archive it and create another.
        </p>
      </div>

      <section aria-labelledby="fields-title" className={`${cardClass} space-y-3`}>
        <h2 id="fields-title" className="text-lg font-semibold">
          Budget
        </h2>
        <EditBudgetForm initial={initial} options={options} />
      </section>

      <section aria-labelledby="value-title" className={`${cardClass} space-y-3`}>
        <h2 id="value-title" className="text-lg font-semibold">
          Value:{" "}
          {killed ? (
            <>
              killed (restores to <Money micros={budget.valueBeforeKill ?? budget.defaultValue} currency={budget.currency} />)
            </>
          ) : (
            <Money micros={budget.value} currency={budget.currency} />
          )}
        </h2>
        <AdjustBudgetForm
          budgetKey={key}
          value={budget.value}
          valueBeforeKill={budget.valueBeforeKill}
          min={budget.minValue}
          max={budget.maxValue}
          defaultValue={budget.defaultValue}
          currency={budget.currency}
          version={budget.version}
          isAdmin
        />
        <BudgetKillButton budgetKey={key} killed={killed} restoresTo={formatMoneyText(budget.valueBeforeKill ?? budget.defaultValue, budget.currency)} />
      </section>

      {spec.scope === "account" ? (
        <section aria-labelledby="overrides-title" className={`${cardClass} space-y-3`}>
          <h2 id="overrides-title" className="text-lg font-semibold">
            Accounts with their own value
          </h2>
          {spec.overrides.length === 0 ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              None: every account has <Money micros={budget.value} currency={budget.currency} />.
            </p>
          ) : (
            <ul className="space-y-2" aria-label="Overrides of this budget">
              {spec.overrides.map((o) => (
                <li key={o.caller} className="flex flex-wrap items-center justify-between gap-2 text-sm" data-testid={`budget-override-row-${o.caller}`}>
                  <span>
                    <span className="font-mono">{o.caller}</span>:{" "}
                    {o.value === 0 ? "blocked on every member" : <Money micros={o.value} currency={budget.currency} />}
                    <span className="text-zinc-600 dark:text-zinc-400"> · {o.reason}</span>
                  </span>
                  <RemoveBudgetOverrideButton budgetKey={key} caller={o.caller} />
                </li>
              ))}
            </ul>
          )}
          <BudgetOverrideForm budgetKey={key} min={budget.minValue} max={budget.maxValue} currency={budget.currency} />
        </section>
      ) : null}

      <section aria-labelledby="archive-title" className={`${cardClass} space-y-3`}>
        <h2 id="archive-title" className="text-lg font-semibold">
          {archived ? "Archived" : "Archive"}
        </h2>
        <p className="text-sm">
          {archived
            ? "It charges and refuses nothing. Unarchiving makes it count again from the next reservation."
            : "Archiving stops it counting and refusing from the next reservation; its history stays. Nothing is ever deleted."}
        </p>
        <BudgetArchiveButton budgetKey={key} archived={archived} looser={looser} />
      </section>
    </div>
  );
}
