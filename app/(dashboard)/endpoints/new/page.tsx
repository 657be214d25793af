import type { Metadata } from "next";
import Link from "next/link";
import { requirePageRole } from "@/app/_lib/session";
import { NewEndpointForm } from "../_components/new-endpoint-form";

export const metadata: Metadata = { title: "New endpoint · Ceilings" };
export const dynamic = "force-dynamic";

export default async function NewEndpointPage() {
  await requirePageRole("admin");
  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm">
          <Link href="/" className="underline underline-offset-2">
            Overview
          </Link>
        </p>
        <h1 className="text-2xl font-semibold tracking-tight">New endpoint</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Put one of your own metered actions under a hard ceiling. Each ceiling states what it guarantees as you type; an endpoint needs at least one global
          ceiling. The same can be done as a reviewed file: <code className="font-mono">npm run ceilings -- plan ceilings.json</code>, then{" "}
          <code className="font-mono">apply</code>.
        </p>
      </div>
      <NewEndpointForm />
    </div>
  );
}
