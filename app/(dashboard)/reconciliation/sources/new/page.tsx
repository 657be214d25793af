import type { Metadata } from "next";
import Link from "next/link";
import { requirePageRole } from "@/app/_lib/session";
import { emptySource, SourceForm } from "../_components/source-form";

export const metadata: Metadata = { title: "New usage source · Ceilings" };
export const dynamic = "force-dynamic";

export default async function NewUsageSourcePage() {
  await requirePageRole("admin");
  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/reconciliation" className="underline underline-offset-2">
            Reconciliation
          </Link>
        </p>
        <h1 className="text-2xl font-semibold tracking-tight">Connect a usage source</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Where a provider reports its own usage: the worker pulls it every day (and on demand), and each day is compared with what Ceilings charged over the
          same interval of the provider&apos;s day. Credentials stay in the worker&apos;s environment: name the variable, never paste the key.
        </p>
      </div>
      <SourceForm initial={emptySource} />
    </div>
  );
}
