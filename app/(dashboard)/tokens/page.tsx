import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { DataTable, type TableSpec } from "@/components/data-table";
import { formatDateTime } from "@/lib/format";
import { listStaffTokens, STAFF_TOKEN_ENV, type StaffTokenListed } from "@/lib/staff-tokens";
import { CreateTokenForm } from "./_components/create-token-form";
import { RevokeTokenButton } from "./_components/revoke-token-button";

export const metadata: Metadata = { title: "Personal tokens" };

function status(t: StaffTokenListed) {
  if (t.revokedAt) return <span className="text-red-700 dark:text-red-400">revoked {formatDateTime(t.revokedAt)}</span>;
  if (!t.live) return <span className="text-zinc-500">ended: your password, role or state changed since it was made</span>;
  return (
    <div className="space-y-1">
      <span>active</span>
      <RevokeTokenButton id={t.id} label={`${t.name} (cst_${t.prefix})`} />
    </div>
  );
}

const tokenTable: TableSpec<StaffTokenListed> = {
  rowKey: (t) => t.id,
  rowAttributes: (t) => ({ "data-testid": "token-row", "data-prefix": t.prefix, className: t.live ? undefined : "text-zinc-500" }),
  empty: (
    <p className="rounded-lg border border-dashed border-zinc-300 p-6 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
      You have no personal tokens yet.
    </p>
  ),
  columns: [
    { header: "Name", cellClassName: "align-top", cell: (t) => t.name },
    { header: "Token", cellClassName: "align-top font-mono", cell: (t) => `cst_${t.prefix}_…` },
    { header: "Created (UTC)", cellClassName: "align-top", cell: (t) => formatDateTime(t.createdAt) },
    {
      header: "Last used (UTC)",
      cellClassName: "align-top",
      cell: (t) => (t.lastUsedAt ? formatDateTime(t.lastUsedAt) : <span className="text-zinc-500">never</span>),
    },
    { header: "Status", cellClassName: "align-top", cell: status },
  ],
};

// Only the signed-in member's own tokens: nobody lists, makes or revokes someone else's.
export default async function TokensPage() {
  const me = await requirePageRole("operator");
  const tokens = await listStaffTokens(await getDb(), { staffId: me.id });
  return (
    <section className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Personal tokens</h1>
        <p className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
          A personal token proves to the command line that it is you: asking for a raise (<code>apply</code>, <code>plans</code>, <code>accounts</code>),{" "}
          <code>approve</code>, <code>reject</code>, <code>cancel</code>, <code>acknowledge</code> and <code>apply --break-glass</code> refuse a bare{" "}
          <code>--as</code>. Run them with <code>{STAFF_TOKEN_ENV}</code> set to one of your tokens. Only a hash is stored; the token is shown once. It ends
          when you revoke it, or when your password, role or state changes (as your sessions do).
        </p>
      </div>
      <DataTable spec={tokenTable} caption="Your personal tokens" rows={tokens} />
      <CreateTokenForm />
    </section>
  );
}
