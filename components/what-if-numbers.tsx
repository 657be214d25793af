import type { WhatIfData } from "@/app/(dashboard)/what-if-action-core";
import { Money } from "@/components/money";
import { formatCount, formatDay } from "@/lib/format";

// The what-if's numbers (the panel fetches them): totals for 7 and 30 days, a bar a day over 30,
// the last 7 days in a table, and the five accounts hit hardest. Narrow screens: one column, the
// table scrolls sideways, long account names wrap.

export function WhatIfNumbers({ data }: { data: WhatIfData }) {
  const { d7, d30 } = data;
  const grants = d30.days.reduce((n, d) => n + d.granted + d.refused, 0);
  const money = (micros: number) => <Money micros={micros} currency={d30.currency} />;
  if (grants === 0) {
    return (
      <div className="mt-1">
        <p data-testid="what-if-refused-7">No history: nothing would have been refused.</p>
        <span data-testid="what-if-refused-30" className="sr-only">
          0 refused over 30 days
        </span>
        <span data-testid="what-if-top-accounts" className="sr-only">
          no accounts
        </span>
      </div>
    );
  }
  const peak = Math.max(1, ...d30.days.map((d) => d.refused));
  return (
    <div className="mt-2 space-y-3">
      <dl className="grid grid-cols-1 gap-2 sm:grid-cols-2">
        <div>
          <dt className="text-zinc-600 dark:text-zinc-400">Last 7 days</dt>
          <dd data-testid="what-if-refused-7" className="font-medium">
            {formatCount(d7.refused)} calls refused, {money(d7.refusedMoney)}
          </dd>
        </div>
        <div>
          <dt className="text-zinc-600 dark:text-zinc-400">Last 30 days</dt>
          <dd data-testid="what-if-refused-30" className="font-medium">
            {formatCount(d30.refused)} calls refused, {money(d30.refusedMoney)}
          </dd>
        </div>
      </dl>
      {/* Thirty bars, one a day: how the refusals fall over the month. */}
      <div aria-hidden="true" className="flex h-10 items-end gap-px">
        {d30.days.map((d) => (
          <div
            key={d.day}
            title={`${d.day}: ${d.refused} refused`}
            className="flex-1 bg-amber-600 dark:bg-amber-500"
            style={{ height: `${d.refused === 0 ? 0 : Math.max(6, (d.refused / peak) * 100)}%` }}
          />
        ))}
      </div>
      <div className="overflow-x-auto">
        <table className="w-full text-left tabular-nums">
          <caption className="sr-only">Refused per day, last 7 days</caption>
          <thead>
            <tr className="text-zinc-600 dark:text-zinc-400">
              <th scope="col" className="pr-3 font-normal">
                Day
              </th>
              <th scope="col" className="pr-3 font-normal">
                Granted
              </th>
              <th scope="col" className="pr-3 font-normal">
                Refused
              </th>
              <th scope="col" className="font-normal">
                Money
              </th>
            </tr>
          </thead>
          <tbody>
            {d7.days.map((d) => (
              <tr key={d.day}>
                <td className="pr-3 whitespace-nowrap">{formatDay(d.day)}</td>
                <td className="pr-3">{formatCount(d.granted)}</td>
                <td className="pr-3">{formatCount(d.refused)}</td>
                <td>{money(d.refusedMoney)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div data-testid="what-if-top-accounts">
        <p className="text-zinc-600 dark:text-zinc-400">Hit hardest (30 days)</p>
        {d30.topAccounts.length === 0 ? (
          <p>No account would have been refused.</p>
        ) : (
          <ol className="list-decimal pl-5">
            {d30.topAccounts.map((a) => (
              <li key={a.account} className="break-all">
                {a.account === "" ? "(no caller)" : a.account}: {formatCount(a.refused)} refused, {money(a.refusedMoney)}
              </li>
            ))}
          </ol>
        )}
      </div>
    </div>
  );
}
