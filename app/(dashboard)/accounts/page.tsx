import { InputError } from "@/lib/errors";
import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AccountLink, accountPath } from "@/components/account-link";
import { DataTable, type TableSpec } from "@/components/data-table";
import { buttonClass, cardClass, inputClass, labelClass } from "@/components/ui";
import { estimateAccounts, listTopTargets, searchAccounts, topTargetParam, type AccountMatch, type AccountSearch } from "@/lib/accounts/read";
import { formatCount, formatUtc } from "@/lib/format";
import { firstValues } from "@/lib/search-params";
import Link from "next/link";
import { TopAccountsView } from "./_components/top-accounts";

export const metadata: Metadata = { title: "Accounts · Ceilings" };
export const dynamic = "force-dynamic";

/** Search results shown at once; a longer prefix narrows them. */
const SEARCH_LIMIT = 50;

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function AccountsPage({ searchParams }: Props) {
  await requirePageRole("viewer");
  const raw = firstValues(await searchParams);
  const db = await getDb();
  const now = new Date();
  const q = raw.q ?? "";
  let search: AccountSearch | null = null;
  let searchError: string | null = null;
  if (q.trim() !== "") {
    try {
      search = await searchAccounts(db, q, SEARCH_LIMIT);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      searchError = error.message;
    }
  }
  const [known, targets] = await Promise.all([estimateAccounts(db), listTopTargets(db)]);
  const target = targets.find((t) => topTargetParam(t) === raw.top) ?? targets[0] ?? null;

  return (
    <div className="space-y-8">
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold tracking-tight">Accounts</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Every billing account Ceilings has seen ({known.approximate ? "about " : ""}
          {formatCount(known.n)}): find one by its id or a prefix of it to see its plan, what binds it, what it spent and where it was refused.
        </p>
      </div>

      <section aria-labelledby="search-title" className="space-y-3">
        <h2 id="search-title" className="sr-only">
          Search
        </h2>
        <form method="get" action="/accounts" role="search" className={`${cardClass} flex flex-wrap items-end gap-3`}>
          {raw.top ? <input type="hidden" name="top" value={raw.top} /> : null}
          <div className="min-w-0 flex-1 basis-64">
            <label htmlFor="account-q" className={labelClass}>
              Account id or prefix
            </label>
            <input
              id="account-q"
              name="q"
              type="search"
              defaultValue={q}
              maxLength={400}
              autoComplete="off"
              spellCheck={false}
              placeholder="acct_4a"
              className={inputClass}
              data-testid="account-search"
            />
          </div>
          <button type="submit" className={buttonClass} data-testid="account-search-submit">
            Search
          </button>
        </form>
        {searchError ? (
          <p role="alert" className="text-sm text-red-700 dark:text-red-400" data-testid="account-search-error">
            {searchError}
          </p>
        ) : search ? (
          <SearchResults search={search} />
        ) : null}
      </section>

      <section aria-labelledby="top-title" className="space-y-3">
        <h2 id="top-title" className="text-lg font-semibold">
          Top accounts
        </h2>
        {target === null ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="top-accounts-none">
            No endpoint has a per-caller ceiling and no budget is kept per account: there is nothing counted per account to rank yet.
          </p>
        ) : (
          <TopAccountsView db={db} targets={targets} target={target} now={now} q={q} exact={raw.exact === "1"} />
        )}
      </section>
    </div>
  );
}

function SearchResults({ search }: { search: AccountSearch }) {
  const exact = search.matches[0]?.account === search.query;
  const spec: TableSpec<AccountMatch> = {
    testId: "account-results",
    rowKey: (m) => m.account,
    rowAttributes: (m) => ({ "data-testid": "account-result", "data-account": m.account }),
    empty: (
      <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="account-results-empty">
        No account starts with <span className="font-mono">{search.query}</span>.{" "}
        <Link href={accountPath(search.query)} className="underline underline-offset-2">
          Open {search.query} anyway
        </Link>{" "}
        to assign it a plan or block it before its first call.
      </p>
    ),
    columns: [
      { header: "Account", cell: (m) => <AccountLink account={m.account} /> },
      { header: "Plan", cell: (m) => (m.planKey === null ? "—" : `${m.planName ?? m.planKey}${m.onDefault ? " (default)" : ""}`) },
      { header: "State", cell: (m) => (m.blockedAt ? <span className="text-red-700 dark:text-red-400">blocked {formatUtc(m.blockedAt)}</span> : "active") },
      { header: "First seen", cellClassName: "whitespace-nowrap tabular-nums", cell: (m) => formatUtc(m.firstSeenAt) },
    ],
  };
  return (
    <div className="space-y-2">
      <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="account-results-count">
        {search.matches.length === 0
          ? ""
          : `${exact ? "The account itself, then the" : "The"} ${search.more ? `first ${search.matches.length}` : search.matches.length} account${search.matches.length === 1 ? "" : "s"} starting with “${search.query}”${search.more ? "; type more of the id to narrow them" : ""}.`}
      </p>
      <DataTable spec={spec} caption={`Accounts starting with ${search.query}`} rows={search.matches} />
    </div>
  );
}
