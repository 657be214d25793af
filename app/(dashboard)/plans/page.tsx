import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { cardClass, secondaryButtonClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { formatCount } from "@/lib/format";
import { listPlans } from "@/lib/plans";

export const metadata: Metadata = { title: "Plans · Ceilings" };
export const dynamic = "force-dynamic";

export default async function PlansPage() {
  const staff = await requirePageRole("viewer");
  const plans = await listPlans(await getDb());
  const isAdmin = hasRole(staff.role, "admin");
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight">Plans</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            A customer tier&apos;s own values on per-caller ceilings and per-account budgets. What binds an account: its override, else its plan&apos;s value,
            else the ceiling&apos;s or budget&apos;s own. Every account is on the default plan until it is assigned another.
          </p>
        </div>
        {isAdmin ? (
          <Link href="/plans/new" className={secondaryButtonClass} data-testid="new-plan">
            New plan
          </Link>
        ) : null}
      </div>
      <div className={`${cardClass} overflow-x-auto p-0`}>
        <table className="w-full text-sm" data-testid="plans-table">
          <caption className="sr-only">Plans, with the accounts on each</caption>
          <thead className="text-left text-zinc-600 dark:text-zinc-400">
            <tr>
              <th scope="col" className="px-4 py-2 font-medium">
                Plan
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                Description
              </th>
              <th scope="col" className="px-4 py-2 text-right font-medium">
                Accounts
              </th>
            </tr>
          </thead>
          <tbody>
            {plans.map((p) => (
              <tr key={p.id} className="border-t border-zinc-200 dark:border-zinc-800" data-testid={`plan-row-${p.key}`}>
                <td className="px-4 py-2">
                  <Link href={`/plans/${encodeURIComponent(p.key)}`} className="font-medium underline-offset-2 hover:underline">
                    {p.name}
                  </Link>{" "}
                  <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{p.key}</span>
                  {p.isDefault ? (
                    <span className="ml-2 rounded bg-zinc-100 px-1.5 py-0.5 text-xs font-medium dark:bg-zinc-800" data-testid="default-plan">
                      default
                    </span>
                  ) : null}
                </td>
                <td className="max-w-md px-4 py-2 text-zinc-700 dark:text-zinc-300">{p.description || "—"}</td>
                <td className="px-4 py-2 text-right tabular-nums">
                  {p.approximate ? "about " : ""}
                  {formatCount(p.accounts)}
                  {p.isDefault ? <span className="block text-xs text-zinc-600 dark:text-zinc-400">with every account not assigned a plan</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
