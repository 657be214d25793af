"use client";

import { useEffect, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import type { WhatIfData } from "@/app/(dashboard)/what-if-action-core";
import { Money } from "@/components/money";
import { formatCount } from "@/lib/format";
import { WhatIfNumbers } from "./what-if-numbers";

// What a value would have refused, replayed from the reservations ledger (lib/changes/what-if.ts),
// shown beside a value form while the value is typed. Debounced, and never in the way: it is not
// part of the form, so saving does not wait for it, and a failure is one quiet line.

const DEBOUNCE_MS = 400;

type WhatIfPanelProps = {
  /** The target's fields as the whatif.read action reads them (target, ceilingId, ...), without the value. */
  fields: Record<string, string>;
  /** The value to replay, or null to show nothing (not lower, not parsed yet). */
  value: number | null;
  /** What one unit of the value is: "calls", "emails", or "money" for budgets (micros of `currency`). */
  unit: string;
  currency?: string;
};

type Answer = { status: "idle" } | { status: "loading" } | { status: "error"; error: string } | { status: "ok"; data: WhatIfData };

export function WhatIfPanel({ fields, value, unit, currency = "USD" }: WhatIfPanelProps) {
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
    <section
      aria-live="polite"
      data-testid="what-if"
      className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-zinc-900 dark:border-amber-800 dark:bg-amber-950/40 dark:text-zinc-100"
    >
      <h3 className="font-medium">
        What {unit === "money" ? <Money micros={value} currency={currency} /> : `${formatCount(value)} ${unit}`} would have refused
      </h3>
      {answer.status === "ok" ? <WhatIfNumbers data={answer.data} /> : null}
      {answer.status === "loading" || answer.status === "idle" ? (
        <p className="mt-1 text-zinc-600 dark:text-zinc-400">Replaying the last 30 days of reservations…</p>
      ) : null}
      {answer.status === "error" ? <p className="mt-1 text-zinc-600 dark:text-zinc-400">What-if unavailable: {answer.error}. Saving is not affected.</p> : null}
    </section>
  );
}
