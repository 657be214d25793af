import type { Metadata } from "next";
import Link from "next/link";
import { requirePageRole } from "@/app/_lib/session";
import { NewPlanForm } from "../_components/plan-controls";

export const metadata: Metadata = { title: "New plan · Ceilings" };
export const dynamic = "force-dynamic";

export default async function NewPlanPage() {
  await requirePageRole("admin");
  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/plans" className="underline underline-offset-2">
            Plans
          </Link>
        </p>
        <h1 className="text-2xl font-semibold tracking-tight">New plan</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          A plan starts with no values: its accounts get the ceilings&apos; and budgets&apos; own until values are set on its page. The same can be done as a
          reviewed file: the catalog file&apos;s <code className="font-mono">plans</code> list, then <code className="font-mono">npm run ceilings -- plan</code>{" "}
          and <code className="font-mono">apply</code>.
        </p>
      </div>
      <NewPlanForm />
    </div>
  );
}
