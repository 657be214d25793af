import Link from "next/link";
import { RefusalsTable } from "@/components/refusals-table";
import { cardClass } from "@/components/ui";
import type { AccountView, PlanOption } from "@/lib/accounts/read";
import { formatDateTime, formatUtc } from "@/lib/format";
import { BlockAccountButton, ChangePlanForm, UnblockAccountButton } from "./account-controls";
import { ApiKeysTable, BudgetBindingsTable, CeilingBindingsTable, ReservationsTable } from "./account-tables";

// One account's page from its prepared view: the page reads (and checks the role), this renders.
// canBlock and isAdmin only leave out controls the role cannot use; each action checks it again.

/** Whether there is nothing to show: never registered, and no counter, override, refusal, reservation or key. */
export function isEmptyAccount(view: AccountView): boolean {
  return (
    !view.registered &&
    view.refusals.length === 0 &&
    view.reservations.length === 0 &&
    view.apiKeys.length === 0 &&
    [...view.ceilings, ...view.budgets].every((x) => x.last30.spend === 0 && x.used === 0 && x.override === null)
  );
}

export function AccountPageView({ view, canBlock, isAdmin, plans }: { view: AccountView; canBlock: boolean; isAdmin: boolean; plans: PlanOption[] }) {
  const planKey = view.plan?.key ?? "default";
  const nothing = isEmptyAccount(view);

  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-sm">
            <Link href="/accounts" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
              Accounts
            </Link>
          </p>
          <h1 className="break-all font-mono text-2xl font-semibold tracking-tight" data-testid="account-id">
            {view.account}
          </h1>
          <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="account-plan">
            {view.plan ? (
              <>
                Plan <strong>{view.plan.name}</strong> <span className="font-mono text-xs">({view.plan.key})</span>
                {view.plan.onDefault
                  ? ", the default plan: never assigned"
                  : view.plan.setAt
                    ? `, assigned ${formatDateTime(view.plan.setAt)} by ${view.plan.setBy ?? "unknown"}`
                    : ""}
              </>
            ) : (
              "No plan: no plan is marked the default"
            )}
          </p>
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            {view.firstSeenAt ? `First seen ${formatUtc(view.firstSeenAt)}` : "Ceilings has not registered this account yet"}
          </p>
        </div>
        {view.blocked ? (
          <span
            className="rounded-full bg-red-100 px-2.5 py-0.5 text-sm font-medium text-red-800 dark:bg-red-950 dark:text-red-300"
            data-testid="account-blocked-badge"
          >
            Blocked
          </span>
        ) : null}
      </div>

      {view.blocked ? (
        <section role="status" className={`${cardClass} border-red-400 dark:border-red-700`} data-testid="account-blocked">
          <p className="text-sm">
            Blocked {formatDateTime(view.blocked.at)} by {view.blocked.by ?? "unknown"}: {view.blocked.reason || "no reason given"}. Every call naming this
            account is refused on every endpoint (gate blocked); each limit below binds it at 0 until then, and the values under it (own, plan, override) are
            what binds it again once it is unblocked.
          </p>
        </section>
      ) : null}

      {nothing ? (
        <section className={`${cardClass} space-y-2`} data-testid="account-nothing">
          <h2 className="text-base font-semibold">Nothing yet</h2>
          <p className="text-sm">
            No reservation has named {view.account}, and it has no plan, override, refusal or key of its own. If the customer reserved under another id, search
            for it.
            {isAdmin ? " You can still assign it a plan or block it before its first call." : ""}
          </p>
        </section>
      ) : null}

      {canBlock ? (
        <section aria-label="Account controls" className={`${cardClass} space-y-4`} data-testid="account-controls">
          <div className="flex flex-wrap gap-2">
            {view.blocked === null ? (
              <BlockAccountButton account={view.account} />
            ) : isAdmin ? (
              <UnblockAccountButton account={view.account} />
            ) : (
              <p className="text-sm text-zinc-600 dark:text-zinc-400">An admin can unblock this account.</p>
            )}
          </div>
          {isAdmin && plans.length > 0 ? <ChangePlanForm account={view.account} current={view.plan?.key ?? null} plans={plans} /> : null}
        </section>
      ) : null}

      <section aria-labelledby="limits-title" className="space-y-3">
        <h2 id="limits-title" className="text-lg font-semibold">
          What binds this account
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Its override, else its plan&apos;s value, else the ceiling&apos;s or budget&apos;s own; a kill binds every account at 0. Spend is this account&apos;s
          counter in the open window and over the windows of the 30 UTC days since {view.since.toISOString().slice(0, 10)}.
        </p>
        <h3 className="text-sm font-medium">Per-caller ceilings</h3>
        <CeilingBindingsTable rows={view.ceilings} planKey={planKey} />
        <h3 className="text-sm font-medium">Per-account budgets</h3>
        <BudgetBindingsTable rows={view.budgets} planKey={planKey} />
      </section>

      <section aria-labelledby="refusals-title" className="space-y-3">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 id="refusals-title" className="text-lg font-semibold">
            Latest refusals
          </h2>
          <Link
            href={`/refusals?caller=${encodeURIComponent(view.account)}`}
            className="text-sm underline underline-offset-2"
            data-testid="account-all-refusals"
          >
            Every refusal of this account
          </Link>
        </div>
        <RefusalsTable rows={view.refusals} caption={`Refusals of ${view.account}, newest first`} empty="This account has never been refused." />
      </section>

      <section aria-labelledby="reservations-title" className="space-y-3">
        <h2 id="reservations-title" className="text-lg font-semibold">
          Latest reservations
        </h2>
        <ReservationsTable rows={view.reservations} />
      </section>

      <section aria-labelledby="keys-title" className="space-y-3">
        <h2 id="keys-title" className="text-lg font-semibold">
          API keys
        </h2>
        <ApiKeysTable rows={view.apiKeys} />
      </section>
    </div>
  );
}
