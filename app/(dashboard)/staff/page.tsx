import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { DataTable, type TableSpec } from "@/components/data-table";
import { listStaff, type StaffSummary } from "@/lib/auth";
import { type GrantLine, lineageText, listStaffGrants } from "@/lib/auth/staff-lineage";
import { listSignInFailures, type SignInFailureRow } from "@/lib/auth/throttle";
import { formatDateTime } from "@/lib/format";
import { AddStaffForm } from "./_components/add-staff-form";
import { StaffRowControls } from "./_components/staff-row-controls";

export const metadata: Metadata = { title: "Staff" };

// Never empty: the admin reading it is on it.
function staffTable(myId: number, grants: Map<number, GrantLine[]>): TableSpec<StaffSummary> {
  return {
    rowKey: (m) => m.id,
    rowAttributes: (m) => ({ "data-testid": "staff-row", "data-email": m.email }),
    empty: null,
    columns: [
      {
        header: "Email",
        cellClassName: "font-mono",
        cell: (m) => (
          <>
            {m.email}
            {m.id === myId ? <span className="ml-2 text-xs text-zinc-500">(you)</span> : null}
          </>
        ),
      },
      { header: "Name", cell: (m) => m.name || <span className="text-zinc-500">none</span> },
      {
        header: "Status",
        cell: (m) => (m.disabledAt ? <span className="text-red-700 dark:text-red-400">disabled {formatDateTime(m.disabledAt)}</span> : "active"),
      },
      {
        header: "Added (UTC)",
        cell: (m) => (
          <>
            {formatDateTime(m.createdAt)}
            <div className="text-xs text-zinc-500" data-testid="staff-lineage">
              {lineageText(grants.get(m.id))}
            </div>
          </>
        ),
      },
      { header: "Role and access", cell: (m) => <StaffRowControls email={m.email} role={m.role} disabled={m.disabledAt !== null} /> },
    ],
  };
}

const failureTable: TableSpec<SignInFailureRow> = {
  testId: "sign-in-failures",
  rowKey: (f) => f.key,
  rowAttributes: () => ({ "data-testid": "sign-in-failure-row" }),
  empty: (
    <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="sign-in-failures-none">
      No failed sign-ins.
    </p>
  ),
  columns: [
    { header: "Account or address", cellClassName: "font-mono", cell: (f) => f.key },
    { header: "Failures", cell: (f) => f.failures },
    { header: "Last (UTC)", cell: (f) => formatDateTime(f.lastAt) },
    { header: "State", cell: (f) => (f.overLimit ? <span className="text-red-700 dark:text-red-400">locked out</span> : "slowed") },
  ],
};

export default async function StaffPage() {
  const me = await requirePageRole("admin");
  const db = await getDb();
  const [members, failures, grants] = await Promise.all([listStaff(db), listSignInFailures(db), listStaffGrants(db)]);
  return (
    <section className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Staff</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
          Viewers read; operators also kill, restore and acknowledge alerts; admins also change values, bounds, API keys and staff. Disabling or demoting
          someone ends their open sessions at once. Under each date: who created, promoted or set the password of the member. A raise&apos;s second admin must
          be independent of who asked: neither made by them nor their maker, through any chain; an admin added with <code>npm run staff</code> has no parent.
        </p>
      </div>
      <DataTable spec={staffTable(me.id, grants)} caption="Staff" rows={members} />
      <AddStaffForm />
      <section aria-labelledby="sign-in-failures-title" className="space-y-2">
        <h2 id="sign-in-failures-title" className="text-lg font-semibold">
          Failed sign-ins (last 15 minutes)
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Per account and per address. A locked account is refused only to addresses that failed themselves; the right password from anywhere else still signs
          in, after a delay.
        </p>
        <DataTable spec={failureTable} caption="Failed sign-ins" rows={failures} />
      </section>
    </section>
  );
}
