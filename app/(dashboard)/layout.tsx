import Link from "next/link";
import type { ReactNode } from "react";
import { hasRole } from "@/lib/auth/roles";
import { requirePageRole } from "@/app/_lib/session";
import { getDb } from "@/db/client";
import { DatabaseFailingOver } from "@/components/database-failing-over";
import { KillBannerSlot } from "./_components/kill-banner-slot";
import { probeDatabase } from "@/lib/database-status";
import { NavLinks } from "./_components/nav-links";
import { AlertsNavBadge } from "./alerts/_components/alerts-nav-badge";
import { SignOutButton } from "./_components/sign-out-button";
import { countPendingRequests } from "@/lib/changes/pending-count";

// Every dashboard page still checks its own role: a layout does not re-run on client navigation,
// so this guard only decides whether the shell is drawn.
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  // Asked first and bounded: while the cluster fails over, the session check and the page would
  // wait on a connection and end in a 500.
  const database = await probeDatabase(await getDb());
  if (!database.ok) return <DatabaseFailingOver message={database.message} />;
  const staff = await requirePageRole("viewer");
  const pendingChanges = await readPendingCount();
  return (
    <div className="min-h-screen">
      <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <span className="text-base font-semibold tracking-tight">Ceilings</span>
          <NavLinks pendingChanges={pendingChanges} />
          <AlertsNavBadge />
          <div className="ml-auto flex items-center gap-3 text-sm" data-testid="signed-in-as">
            <span className="text-zinc-700 dark:text-zinc-300">{staff.email}</span>
            {hasRole(staff.role, "operator") ? (
              <Link href="/tokens" className="text-zinc-700 underline-offset-2 hover:underline dark:text-zinc-300">
                Personal tokens
              </Link>
            ) : null}
            <span className="rounded-full bg-zinc-100 px-2 py-0.5 text-xs font-medium uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
              {staff.role}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      {/* Above every page, so a kill is visible wherever staff are. */}
      <KillBannerSlot />
      <main className="mx-auto max-w-7xl px-4 py-6">{children}</main>
    </div>
  );
}

// Like the alerts badge: a failure here hides the count, it never takes the dashboard down.
async function readPendingCount(): Promise<number> {
  try {
    return await countPendingRequests(await getDb());
  } catch (error) {
    console.error("pending change requests could not be counted", error);
    return 0;
  }
}
