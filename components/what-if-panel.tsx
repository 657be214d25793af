"use client";

import { useEffect, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import type { WhatIfData } from "@/app/(dashboard)/what-if-action-core";
import { formatCount, formatDay, formatMoney } from "@/lib/format";

// What a value would have refused, replayed from the reservations ledger (lib/changes/what-if.ts),
// shown beside a value form while the value is typed. Debounced, and never in the way: it is not
// part of the form, so saving does not wait for it, and a failure is one quiet line.

const DEBOUNCE_MS = 400;

type WhatIfPanelProps = {
  /** The target's fields as the whatif.read action reads them (target, ceilingId, ...), without the value. */
  fields: Record<string, string>;
  /** The value to replay, or null to show nothing (not lower, not parsed yet). */
  value: number | null;
  /** What one unit of the value is: "calls", "emails", or "money" for budgets. */
  unit: string;
};

type Answer = { status: "idle" } | { status: "loading" } | { status: "error"; error: string } | { status: "ok"; data: WhatIfData };

export function WhatIfPanel({ fields, value, unit }: WhatIfPanelProps) {
  const [answer, setAnswer] = useState<Answer>({ status: "idle" });
  const key = JSON.stringify(fields);

  useEffect(() => {
    if (value === null) return;
    let current = true;
    const timer = setTimeout(() => {
      setAnswer({ status: "loading" });
      const form = new FormData();
      for (const [name, v] of Object.entries(JSON.parse(key) as Record<string, string>)) form.set(name, v);
      form.set("value", String(value));
      runAction("whatif.read", IDLE, form)
        .then((state) => {
          if (!current) return;
          if (state.status === "ok" && state.data) setAnswer({ status: "ok", data: state.data as WhatIfData });
          else setAnswer({ status: "error", error: state.status === "error" ? state.error : "no answer" });
        })
        .catch(() => current && setAnswer({ status: "error", error: "the ledger could not be read" }));
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key, value]);

  if (value === null) return null;
  return (
    <section aria-live="polite" data-testid="what-if" className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-zinc-900 dark:border-amber-800 dark:bg-amber-950/40 dark:text-zinc-100">
      <h3 className="font-medium">What {formatCount(value)}{unit === "money" ? " micros" : ` ${unit}`} would have refused</h3>
      {answer.status === "ok" ? <Numbers data={answer.data} /> : null}
      {answer.status === "loading" || answer.status === "idle" ? <p className="mt-1 text-zinc-600 dark:text-zinc-400">Replaying the last 30 days of reservations…</p> : null}
      {answer.status === "error" ? <p className="mt-1 text-zinc-600 dark:text-zinc-400">What-if unavailable: {answer.error}. Saving is not affected.</p> : null}
    </section>
  );
}

function Numbers({ data }: { data: WhatIfData }) {
  const { d7, d30 } = data;
  const grants = d30.days.reduce((n, d) => n + d.granted + d.refused, 0);
  const money = (micros: number) => formatMoney(micros, d30.currency);
  if (grants === 0) {
    return (
      <div className="mt-1">
        <p data-testid="what-if-refused-7">No history: nothing would have been refused.</p>
        <span data-testid="what-if-refused-30" className="sr-only">0 refused over 30 days</span>
        <span data-testid="what-if-top-accounts" className="sr-only">no accounts</span>
      </div>
    );
  }
  const peak = Math.max(1, ...d30.days.map((d) => d.refused));
  return (
    <div className="mt-2 space-y-3">
      <dl className="grid grid-cols-1 gap-2 sm:grid-cols-2">
        <div>
          <dt className="text-zinc-600 dark:text-zinc-400">Last 7 days</dt>
          <dd data-testid="what-if-refused-7" className="font-medium">{formatCount(d7.refused)} calls refused, {money(d7.refusedMoney)}</dd>
        </div>
        <div>
          <dt className="text-zinc-600 dark:text-zinc-400">Last 30 days</dt>
          <dd data-testid="what-if-refused-30" className="font-medium">{formatCount(d30.refused)} calls refused, {money(d30.refusedMoney)}</dd>
        </div>
      </dl>
      {/* Thirty bars, one a day: how the refusals fall over the month. */}
      <div aria-hidden="true" className="flex h-10 items-end gap-px">
        {d30.days.map((d) => (
          <div key={d.day} title={`${d.day}: ${d.refused} refused`} className="flex-1 bg-amber-600 dark:bg-amber-500" style={{ height: `${d.refused === 0 ? 0 : Math.max(6, (d.refused / peak) * 100)}%` }} />
        ))}
      </div>
      <div className="overflow-x-auto">
        <table className="w-full text-left tabular-nums">
          <caption className="sr-only">Refused per day, last 7 days</caption>
          <thead>
            <tr className="text-zinc-600 dark:text-zinc-400">
              <th scope="col" className="pr-3 font-normal">Day</th>
              <th scope="col" className="pr-3 font-normal">Granted</th>
              <th scope="col" className="pr-3 font-normal">Refused</th>
              <th scope="col" className="font-normal">Money</th>
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
