"use client";

import { useId } from "react";
import { Bar, BarChart, ReferenceLine, ResponsiveContainer, XAxis, YAxis } from "recharts";
import { Money } from "@/components/money";
import { formatMoneyCompact, formatPercent } from "@/lib/format";
import { axisTick, chartColors, chartThemeClass, lineSwatchClass, swatchClass } from "./chart-theme";

// Members are told apart by colour and by their order, which the legend repeats in text. Mid-tone
// hues that read on white and on zinc-900 alike; a ninth member reuses the first colour.
const MEMBER_COLORS = ["#0369a1", "#d97706", "#7c3aed", "#059669", "#db2777", "#0891b2", "#65a30d", "#dc2626"] as const;

export type ShareSlice = { key: string; money: number };

type Props = {
  members: ShareSlice[];
  currency: string;
  /** The value to draw the spend against; null for a per-account budget, whose value is each account's. */
  value: number | null;
  /** The budget's spend in the window (budget_usage), which the members' shares split. */
  spend: number;
};

/**
 * The window's spend as one bar stacked by member, against the value when there is one value to
 * draw. Shares come from each member's reservations in the window; the legend carries the numbers.
 */
export function BudgetSharesChart({ members, currency, value, spend }: Props) {
  const captionId = useId();
  const total = members.reduce((sum, m) => sum + m.money, 0);
  const row = Object.fromEntries(members.map((m, i) => [`m${i}`, m.money]));
  const domainMax = Math.max(value ?? 0, total, spend, 1);
  const color = (i: number) => MEMBER_COLORS[i % MEMBER_COLORS.length];
  return (
    <figure className={`${chartThemeClass} min-w-0 space-y-2`} aria-labelledby={captionId} data-testid="budget-shares">
      <figcaption id={captionId} className="text-xs text-zinc-600 dark:text-zinc-400">
        {total === 0 ? (
          "No member has spent in this window yet."
        ) : (
          <>
            Members&apos; shares of <Money micros={total} currency={currency} /> reserved or spent in this window:
          </>
        )}
      </figcaption>
      <div className="h-8 w-full" aria-hidden="true">
        <ResponsiveContainer width="100%" height="100%" minWidth={0}>
          <BarChart data={[{ name: "window", ...row }]} layout="vertical" margin={{ top: 2, right: 4, bottom: 2, left: 4 }} accessibilityLayer={false}>
            <XAxis type="number" domain={[0, domainMax]} hide tick={axisTick} tickFormatter={(v: number) => formatMoneyCompact(v, currency)} />
            <YAxis type="category" dataKey="name" hide />
            {members.map((m, i) => (
              <Bar key={m.key} dataKey={`m${i}`} stackId="s" fill={color(i)} isAnimationActive={false} className="member-share" />
            ))}
            {value !== null && value > 0 ? <ReferenceLine x={value} stroke={chartColors.ceiling} strokeWidth={2} ifOverflow="extendDomain" /> : null}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-700 dark:text-zinc-300" aria-label="Members' shares">
        {members.map((m, i) => (
          <li key={m.key} className="min-w-0 break-all" data-testid="member-share" data-member={m.key} data-money={m.money}>
            <span className={swatchClass} style={{ background: color(i) }} /> <span className="font-mono">{m.key}</span>{" "}
            <Money micros={m.money} currency={currency} />
            {total > 0 ? ` (${formatPercent(m.money / total)})` : ""}
          </li>
        ))}
        {value !== null && value > 0 ? (
          <li>
            <span className={lineSwatchClass} style={{ borderColor: chartColors.ceiling }} /> value <Money micros={value} currency={currency} />
          </li>
        ) : null}
      </ul>
    </figure>
  );
}
