import Link from "next/link";

/** The path of an account's page: the id is any text up to 200 characters, so it is encoded once. */
export function accountPath(account: string): string {
  return `/accounts/${encodeURIComponent(account)}`;
}

/** An account id that opens its page, wherever one is listed (refusals, top accounts, search). */
export function AccountLink({ account, className }: { account: string; className?: string }) {
  return (
    <Link href={accountPath(account)} className={className ?? "break-all font-mono text-xs underline underline-offset-2"}>
      {account}
    </Link>
  );
}
