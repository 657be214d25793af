import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { listStaff } from "@/lib/auth";
import { listSignInFailures } from "@/lib/auth/throttle";
import { AddStaffForm } from "./_components/add-staff-form";
import { StaffRowControls } from "./_components/staff-row-controls";
import { formatDateTime } from "@/lib/format";

export const metadata: Metadata = { title: "Staff" };


export default async function StaffPage() {
  const me = await requirePageRole("admin");
  const db = await getDb();
  const members = await listStaff(db);
  const failures = await listSignInFailures(db);
  return (
    <section className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Staff</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
          Viewers read; operators also kill, restore and acknowledge alerts; admins also change values, bounds, API keys
          and staff. Disabling or demoting someone ends their open sessions at once.
        </p>
      </div>
      <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800">
        <table className="min-w-full divide-y divide-zinc-200 text-sm dark:divide-zinc-800">
          <thead className="bg-zinc-100 text-left dark:bg-zinc-900">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">Email</th>
              <th scope="col" className="px-3 py-2 font-medium">Name</th>
              <th scope="col" className="px-3 py-2 font-medium">Status</th>
              <th scope="col" className="px-3 py-2 font-medium">Added (UTC)</th>
              <th scope="col" className="px-3 py-2 font-medium">Role and access</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
            {members.map((m) => (
              <tr key={m.id} data-testid="staff-row" data-email={m.email}>
                <td className="px-3 py-2 font-mono">
                  {m.email}
                  {m.id === me.id ? <span className="ml-2 text-xs text-zinc-500">(you)</span> : null}
                </td>
                <td className="px-3 py-2">{m.name || <span className="text-zinc-500">none</span>}</td>
                <td className="px-3 py-2">
                  {m.disabledAt ? (
                    <span className="text-red-700 dark:text-red-400">disabled {formatDateTime(m.disabledAt)}</span>
                  ) : (
                    "active"
                  )}
                </td>
                <td className="px-3 py-2">{formatDateTime(m.createdAt)}</td>
                <td className="px-3 py-2">
                  <StaffRowControls email={m.email} role={m.role} disabled={m.disabledAt !== null} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <AddStaffForm />
      <section aria-labelledby="sign-in-failures-title" className="space-y-2">
        <h2 id="sign-in-failures-title" className="text-lg font-semibold">Failed sign-ins (last 15 minutes)</h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Per account and per address. A locked account is refused only to addresses that failed themselves; the right
          password from anywhere else still signs in, after a delay.
        </p>
        {failures.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="sign-in-failures-none">No failed sign-ins.</p>
        ) : (
          // Scrolls inside its own box at phone width: an address or an e-mail is wider than a phone.
          <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label="Failed sign-ins">
          <table className="min-w-full divide-y divide-zinc-200 text-sm dark:divide-zinc-800" data-testid="sign-in-failures">
            <thead className="bg-zinc-100 text-left dark:bg-zinc-900">
              <tr>
                <th scope="col" className="px-3 py-2 font-medium">Account or address</th>
                <th scope="col" className="px-3 py-2 font-medium">Failures</th>
                <th scope="col" className="px-3 py-2 font-medium">Last (UTC)</th>
                <th scope="col" className="px-3 py-2 font-medium">State</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
              {failures.map((f) => (
                <tr key={f.key} data-testid="sign-in-failure-row">
                  <td className="px-3 py-2 font-mono">{f.key}</td>
                  <td className="px-3 py-2">{f.failures}</td>
                  <td className="px-3 py-2">{formatDateTime(f.lastAt)}</td>
                  <td className="px-3 py-2">{f.overLimit ? <span className="text-red-700 dark:text-red-400">locked out</span> : "slowed"}</td>
                </tr>
              ))}
            </tbody>
          </table>
          </div>
        )}
      </section>
    </section>
  );
}
