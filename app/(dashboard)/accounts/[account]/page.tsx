import { InputError } from "@/lib/errors";
import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { hasRole } from "@/lib/auth/roles";
import { listPlanOptions, readAccount, type AccountView } from "@/lib/accounts/read";
import { AccountPageView } from "../_components/account-view";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ account: string }> };

/** The id from the path (encoded once by accountPath); a malformed escape is read as typed. */
function accountOf(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `${accountOf((await params).account).slice(0, 60)} · Accounts · Ceilings` };
}

export default async function AccountPage({ params }: Props) {
  const staff = await requirePageRole("viewer");
  const canBlock = hasRole(staff.role, "operator");
  const isAdmin = hasRole(staff.role, "admin");
  const account = accountOf((await params).account);
  const db = await getDb();
  const now = new Date();
  let view: AccountView;
  try {
    view = await readAccount(db, account, now);
  } catch (error) {
    if (error instanceof InputError) return <BadAccount message={error.message} />;
    throw error;
  }
  const plans = isAdmin ? await listPlanOptions(db) : [];
  return <AccountPageView view={view} canBlock={canBlock} isAdmin={isAdmin} plans={plans} />;
}

function BadAccount({ message }: { message: string }) {
  return (
    <div className="space-y-3">
      <p className="text-sm">
        <Link href="/accounts" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
          Accounts
        </Link>
      </p>
      <h1 className="text-2xl font-semibold tracking-tight">Not an account id</h1>
      <p role="alert" className="text-sm text-red-700 dark:text-red-400" data-testid="account-invalid">
        {message}
      </p>
    </div>
  );
}
