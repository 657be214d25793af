import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { listMemberOptions } from "@/lib/budgets";
import { NewBudgetForm } from "../_components/budget-form";

export const metadata: Metadata = { title: "New budget · Ceilings" };
export const dynamic = "force-dynamic";

export default async function NewBudgetPage() {
  await requirePageRole("admin");
  const options = await listMemberOptions(await getDb());
  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/budgets" className="underline underline-offset-2">
            Budgets
          </Link>
        </p>
        <h1 className="text-2xl font-semibold tracking-tight">New budget</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          A hard limit in money across several endpoints, charged in the same step as their ceilings: a call it refuses costs nothing anywhere. The same can be
          done as a reviewed file: the catalog file&apos;s <code className="font-mono">budgets</code> list, then{" "}
          <code className="font-mono">npm run ceilings -- plan</code> and <code className="font-mono">apply</code>.
        </p>
      </div>
      <NewBudgetForm options={options} />
    </div>
  );
}
